"""``attnviz train``: train a built-in task's model and save it as a model directory."""

from __future__ import annotations

import json
import sys
import time

__all__ = ["add_parser", "run", "format_progress"]


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a small model on a built-in task")
    p.add_argument("--task", required=True, help="task name (e.g. coref, order-sentiment, charlm)")
    p.add_argument("--out", help="model directory to write (default: ./models/TASK)")
    p.add_argument("--device", default="auto", help="auto (default), cpu, cuda or mps")
    p.add_argument("--steps", type=int, help="optimizer steps (default: the task's)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--batch-size", type=int, help="examples per step (default: the task's)")
    p.add_argument("--lr", type=float, help="peak learning rate (default: the task's)")
    p.add_argument("--checkpoint-every", type=int, default=0, metavar="N",
                   help="also save a checkpoint every N steps (default: only at the end)")
    p.add_argument("--snapshots", type=int, default=20, metavar="N",
                   help="attention snapshots of the probe inputs kept for the timeline (default 20)")
    p.set_defaults(run=run)


def format_progress(ev, width: int = 24) -> str:
    """One status line: a bar, step count, loss, accuracy, learning rate, speed and time."""
    filled = int(width * ev.step / max(ev.total, 1))
    bar = "#" * filled + "-" * (width - filled)
    return (f"[{bar}] {ev.step}/{ev.total} loss {ev.loss:.4f} acc {ev.accuracy:.3f} lr {ev.lr:.2e} "
            f"{ev.items_per_s:.0f} ex/s {ev.elapsed:.1f}s")


def run(args) -> int:
    from pathlib import Path

    from attnviz.tasks import get_task
    from attnviz.training.loop import prepare_out_dir, train

    task = get_task(args.task)  # unknown task: one line, exit 2 (AttnvizError)
    out = prepare_out_dir(Path(args.out) if args.out else Path("models") / args.task)
    tty = sys.stderr.isatty()
    last_draw = 0.0
    final = None
    events = train(task, steps=args.steps, device=args.device, seed=args.seed, out_dir=out,
                   checkpoint_every=args.checkpoint_every, n_snapshots=args.snapshots,
                   batch_size=args.batch_size, lr=args.lr)
    try:
        for ev in events:
            if ev.done:
                final = ev
                break
            now = time.monotonic()
            # a terminal gets a live line; a log file gets a line every ~10 % of the run
            if tty and (now - last_draw > 0.1 or ev.step == ev.total):
                print("\r" + format_progress(ev), end="", file=sys.stderr, flush=True)
                last_draw = now
            elif not tty and (ev.step % max(1, ev.total // 10) == 0 or ev.step == ev.total):
                print(format_progress(ev), file=sys.stderr, flush=True)
    finally:
        if tty:
            print(file=sys.stderr)
        events.close()
    print(final.message)
    info = final.result.info
    print(json.dumps({"model": str(out), "task": task.name, "metrics": info.get("metrics", {}),
                      "train_seconds": info.get("train_seconds"), "wall_seconds": info.get("wall_seconds"),
                      "device": info.get("device")}, indent=1))
    return 0
