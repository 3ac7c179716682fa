"""Train every built-in task into ``assets/models/NAME/`` (what ``make assets`` runs).

``python -m attnviz.training.make_assets [--only NAME ...] [--out DIR] [--seed N]``

Each model is trained on the CPU with a fixed seed into a temporary directory that replaces the
old model only when training and evaluation succeeded, so an interrupted run never leaves a
half-written bundled model.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

__all__ = ["main", "build_asset", "check_targets", "ASSET_SEED"]

ASSET_SEED = 0


def check_targets(task, metrics: dict) -> list[str]:
    """Targets (``task.targets``: metric → (">=" | "<=", value)) that ``metrics`` miss, as sentences."""
    missed = []
    for key, (op, value) in getattr(task, "targets", {}).items():
        got = metrics.get(key)
        ok = got is not None and (got >= value if op == ">=" else got <= value)
        if not ok:
            missed.append(f"{key} = {got} (target {op} {value})")
    return missed


def build_asset(task, root: Path, seed: int = ASSET_SEED, device: str = "cpu", log=None) -> dict:
    """Train ``task`` into ``root/NAME`` (swapped in atomically) and return its config info."""
    from attnviz.runtime.opening import write_opening_trace
    from attnviz.training.loop import train

    final_dir = root / task.name
    tmp_dir = root / f".{task.name}.building"
    if tmp_dir.exists():
        shutil.rmtree(tmp_dir)
    ev = None
    for ev in train(task, seed=seed, device=device, out_dir=tmp_dir):
        if log and not ev.done and ev.step % max(1, ev.total // 5) == 0:
            log(f"  {task.name}: step {ev.step}/{ev.total} loss {ev.loss:.4f} acc {ev.accuracy:.3f} {ev.elapsed:.0f}s")
    old = root / f".{task.name}.old"
    if final_dir.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(final_dir, old)
    os.replace(tmp_dir, final_dir)
    if old.exists():
        shutil.rmtree(old)
    write_opening_trace(final_dir)
    return ev.result.info


def main(argv: list[str] | None = None) -> int:
    from attnviz.errors import AttnvizError
    from attnviz.io import assets_dir
    from attnviz.tasks import TASKS, get_task

    parser = argparse.ArgumentParser(prog="python -m attnviz.training.make_assets", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=list(TASKS), help="train only these tasks")
    parser.add_argument("--out", type=Path, help="models folder (default: the bundled assets/models)")
    parser.add_argument("--seed", type=int, default=None, help="default: the task's asset_seed, else 0")
    parser.add_argument("--device", default="cpu", help="cpu (default, reproducible) or auto/cuda/mps")
    parser.add_argument("--opening-only", action="store_true",
                        help="only re-write each model's stored opening trace (after weights changed)")
    args = parser.parse_args(argv)
    root = args.out or assets_dir() / "models"
    root.mkdir(parents=True, exist_ok=True)
    if args.opening_only:
        from attnviz.runtime.opening import write_opening_trace

        for name in args.only or list(TASKS):
            if (root / name / "config.json").is_file():
                written = write_opening_trace(root / name)
                print(f"{name}: {written or 'no opening trace (not a text model)'}", flush=True)
        return 0

    def log(msg: str) -> None:
        print(msg, flush=True)

    failed = False
    for name in args.only or list(TASKS):
        task = get_task(name)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        t0 = time.perf_counter()
        try:
            seed = args.seed if args.seed is not None else getattr(task, "asset_seed", ASSET_SEED)
            info = build_asset(task, root, seed=seed, device=args.device, log=log)
        except AttnvizError as exc:
            log(f"{name}: FAILED: {exc}")
            failed = True
            continue
        wall = time.perf_counter() - t0
        shown = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in info["metrics"].items())
        log(f"{name}: {shown}; trained {info['train_seconds']:.1f} s wall ({info['train_cpu_seconds']:.1f} s CPU), "
            f"total {wall:.1f} s on {info['device']} "
            f"({info['threads']} thread(s), load average {load:.1f} at start)")
        missed = check_targets(task, info["metrics"])
        if missed:
            log(f"{name}: MISSED TARGETS: {'; '.join(missed)}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
