"""``attnviz train``: train a built-in task's model and save it as a model directory."""

from __future__ import annotations

import json
import sys
import time

from attnviz.commands.common import HELP_FORMATTER, examples, float_range, int_range, seed

__all__ = ["add_parser", "run", "format_progress", "EXIT_DIVERGED"]

EXIT_DIVERGED = 3  # training stopped on a non-finite loss or gradient (documented in the README)
MAX_STEPS = 10_000_000
MAX_BATCH = 65_536


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train", help="train a small model on a built-in task",
        description="Train a fresh model on a built-in task (data the project generates) and save it as a model "
                    "directory: config.json, model.safetensors and snapshots.npz, written as one unit. "
                    "Progress goes to stderr. Exit code 3: the run diverged (a non-finite loss or gradient); "
                    "the last good checkpoint, if any, is kept.",
        epilog=examples(
            "attnviz train --task coref --out models/coref",
            "attnviz train --task charlm --steps 500 --lr 1e-3 --batch-size 32 --out /tmp/charlm",
            "attnviz train --task shapes --checkpoint-every 200 --device cpu",
            "attnviz train --task coref --out models/coref --seed 1 --force   # replace the model of another run"),
        formatter_class=HELP_FORMATTER)
    p.add_argument("--task", required=True, metavar="TASK",
                   help="task name: coref, order-sentiment, order-sentiment-nopos, reverse, induction, translate, "
                        "charlm, digits or shapes")
    p.add_argument("--out", metavar="DIR", help="model directory to write (default: ./models/TASK)")
    p.add_argument("--force", action="store_true",
                   help="replace a model in --out that another task or run (other seed, steps, batch size or "
                        "learning rate) wrote; refused otherwise")
    p.add_argument("--device", default="auto", metavar="DEVICE",
                   help="auto (default: a GPU if there is one), cpu, cuda[:N] or mps")
    p.add_argument("--steps", type=int_range(1, MAX_STEPS), help="optimizer steps (default: the task's)")
    p.add_argument("--seed", type=seed, default=0, help="random seed, 0..2^32-1 (default 0)")
    p.add_argument("--batch-size", type=int_range(1, MAX_BATCH), metavar="N",
                   help=f"examples per step, 1..{MAX_BATCH} (default: the task's)")
    p.add_argument("--lr", type=float_range(0, 10, low_open=True),
                   help="peak learning rate, in (0, 10] (default: the task's)")
    p.add_argument("--checkpoint-every", type=int_range(0, MAX_STEPS), default=0, metavar="N",
                   help="also save a checkpoint every N steps (default 0: only at the end)")
    p.add_argument("--snapshots", type=int_range(0, 1000), default=20, metavar="N",
                   help="attention snapshots of the probe inputs kept for the timeline, 0..1000 (default 20)")
    p.set_defaults(run=run)


def format_progress(ev, width: int = 24) -> str:
    """One status line: a bar, step count, loss, accuracy, learning rate, speed and time."""
    filled = int(width * ev.step / max(ev.total, 1))
    bar = "#" * filled + "-" * (width - filled)
    return (f"[{bar}] {ev.step}/{ev.total} loss {ev.loss:.4f} acc {ev.accuracy:.3f} lr {ev.lr:.2e} "
            f"{ev.items_per_s:.0f} ex/s {ev.elapsed:.1f}s")


def check_out_dir(out, task, args) -> None:
    """Refuse to replace a model that another task or another run wrote, unless ``--force``.

    Re-running the same command (same task, seed, steps, batch size and learning rate) may replace its own
    result: it reproduces the same model.
    """
    from attnviz.errors import AttnvizError, ModelLoadError
    from attnviz.models.validate import read_json_bounded

    _check_out_place(out)
    cfg = out / "config.json"
    force = getattr(args, "force", False)
    if not force and not cfg.is_file():
        from attnviz.io.outputs import protected_folder_of

        where = protected_folder_of(out)
        if where is not None:
            raise AttnvizError(f"{out} is inside the model directory {where}: choose another --out, or --force")
        theirs = sorted(n for n in ("model.safetensors", "snapshots.npz") if (out / n).exists())
        if theirs:  # a folder of the user's own files, not a model attnviz saved
            raise AttnvizError(f"{out} holds {' and '.join(theirs)} but no config.json: not a model attnviz wrote; "
                               "choose another --out, or --force to replace them")
    if force or not cfg.is_file():
        return
    try:
        doc = read_json_bounded(cfg)
    except ModelLoadError:
        doc = None
    if not isinstance(doc, dict):
        raise AttnvizError(f"{out} holds a config.json attnviz cannot read: choose another --out, or --force")
    if doc.get("task") != task.name:
        raise AttnvizError(f"{out} holds a model of task {doc.get('task')!r}, not {task.name!r}: choose another "
                           "--out, or --force to replace it")
    wanted = {"seed": args.seed, "steps": args.steps or task.steps, "batch_size": args.batch_size or task.batch_size,
              "lr": args.lr or task.lr}
    differ = [f"{k} {doc.get(k)!r} → {v!r}" for k, v in wanted.items() if doc.get(k) != v]
    if differ:
        raise AttnvizError(f"{out} holds a model of task {task.name!r} from another run ("
                           f"{', '.join(differ)}): choose another "
                           "--out, or --force to replace it")


def _check_out_place(out) -> None:
    """``--out`` must name a folder train can swap as a whole: not the current folder or one above it."""
    import os
    from pathlib import Path

    from attnviz.errors import AttnvizError

    real, here = Path(os.path.realpath(out)), Path(os.path.realpath(os.getcwd()))
    what = ("the folder you are in" if real == here else "a folder above the one you are in"
            if real in here.parents else "a mount point" if real == real.parent or os.path.ismount(real) else None)
    if what:
        raise AttnvizError(f"--out {out} is {what}: a model is written as a new folder and swapped in whole; "
                           "give a folder name such as models/mine")


def run(args) -> int:
    from pathlib import Path

    from attnviz.tasks import get_task
    from attnviz.training.loop import prepare_out_dir

    task = get_task(args.task)  # unknown task: one line, exit 2 (AttnvizError)
    out = Path(args.out).expanduser() if args.out else Path("models") / args.task
    check_out_dir(out, task, args)
    created = not out.exists()
    out = prepare_out_dir(out)
    code = 1
    try:
        code = _train(args, task, out)
        return code
    finally:
        if created and code != 0:  # a run that fails before its first checkpoint leaves no empty folder
            try:
                out.rmdir()  # only succeeds when empty: never deletes a file
            except OSError:
                pass


def _train(args, task, out) -> int:
    from attnviz.training.loop import train

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
    if final is None or final.result is None:  # diverged: the loop said why and what it kept
        message = final.message if final is not None else "training stopped without a result"
        print(f"attnviz: error: {message}", file=sys.stderr)
        return EXIT_DIVERGED
    print(final.message)
    info = final.result.info
    print(json.dumps({"model": str(out), "task": task.name, "metrics": info.get("metrics", {}),
                      "train_seconds": info.get("train_seconds"), "wall_seconds": info.get("wall_seconds"),
                      "device": info.get("device")}, indent=1))
    return 0
