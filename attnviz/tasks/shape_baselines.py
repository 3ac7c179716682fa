"""The best fixed patch of the shapes scenes: one figure per layout, computed once, shipped, read by all.

A fixed patch (the same patch for every scene) is the pointer with no model at all; how often it lands
on the shape depends on the scene generator alone. It used to be re-chosen and re-scored on each
evaluation's 1,000 scenes, so two seeds gave two figures (57.2 % in ``attnviz models``, 62.1 % in the
lesson). Now it is measured once on ``N_SCENES`` held-out scenes per layout (the patch chosen on another
``N_SCENES``), stored in ``assets/data/shape_baselines.json`` and read by
:meth:`attnviz.tasks.shapes.ShapesTask.evaluate`, whose metrics both the model list and the lesson's
rollout claim show. Re-create it with ``python -m attnviz.tasks.shape_baselines``.
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from attnviz.errors import InputError

__all__ = ["compute_baselines", "fixed_patch", "baselines_path", "N_SCENES"]

N_SCENES = 4000  # scored; as many others choose the patch (standard error of the share ≤ 0.8 %)
SCORED_BLOCK, FIT_BLOCK = 0, 1  # held-out scene blocks of N_SCENES each (ShapesTask.held_out's seed)
FORMAT = "attnviz-shape-baselines"
MAX_BYTES = 64 * 1024


def baselines_path() -> Path:
    from attnviz.io import assets_dir

    return assets_dir() / "data" / "shape_baselines.json"


def compute_baselines(patch: int = 8) -> dict:
    """{layout: {"fixed": share, "fixed_patch": row-major index, "n": scenes}} measured from the generator."""
    from attnviz.tasks.pointing import patch_cover
    from attnviz.tasks.shapes import ShapesTask
    from attnviz.vision.shape_scenes import LAYOUTS

    task = ShapesTask()
    out = {}
    for layout in LAYOUTS:
        _, scored, _ = task.held_out(SCORED_BLOCK, n=N_SCENES, layout=layout)
        _, fit, _ = task.held_out(FIT_BLOCK, n=N_SCENES, layout=layout)
        best = int(np.argmax(patch_cover(fit, patch).mean(0)))
        out[layout] = {"fixed": float(patch_cover(scored, patch)[:, best].mean()), "fixed_patch": best,
                       "n": N_SCENES}
    return {"format": FORMAT, "patch_size": patch, "layouts": out}


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    p = Path(path)
    if not p.is_file():
        raise InputError(f"no fixed-patch baselines at {p}: re-create them with python -m attnviz.tasks.shape_baselines")
    try:
        doc = read_json_file(p, MAX_BYTES, what="fixed-patch baselines")
    except JsonLimitError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("layouts"), dict):
        raise InputError(f"{p.name} is not an attnviz fixed-patch baselines file")
    return doc


def fixed_patch(layout: str, patch: int, path: str | Path | None = None) -> tuple[float, int]:
    """(share of scenes whose shape covers the best fixed patch, that patch) for ``layout`` and ``patch``
    pixels, from the shipped file; InputError, one line, when it is missing, damaged or for another patch."""
    doc = _load(str(path or baselines_path()))
    entry = doc["layouts"].get(layout)
    ok = (isinstance(entry, dict) and doc.get("patch_size") == patch and isinstance(entry.get("fixed"), float)
          and 0.0 <= entry["fixed"] <= 1.0 and isinstance(entry.get("fixed_patch"), int))
    if not ok:
        raise InputError(f"the fixed-patch baselines hold no valid {layout!r} entry for {patch}-pixel patches: "
                         "re-create them with python -m attnviz.tasks.shape_baselines")
    return entry["fixed"], entry["fixed_patch"]


def main(argv: list[str] | None = None) -> int:
    from attnviz.io import write_atomic

    out = Path(argv[0]) if argv else baselines_path()
    doc = compute_baselines()
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, lambda tmp: Path(tmp).write_text(json.dumps(doc, indent=1), encoding="utf-8"))
    _load.cache_clear()
    for layout, e in doc["layouts"].items():
        print(f"{layout}: best fixed patch {e['fixed_patch']} on {e['fixed']:.1%} of {e['n']} scenes", flush=True)
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
