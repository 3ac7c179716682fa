"""The rollout slide of a vision model (issue 36 item 10), in the pixels of the written file: the pictures fill the
page (four 395-px squares in one row covered 30 % of a 1920×1080 slide and left a third of it blank; the input
now stands large beside the three maps), the maps stay large, and the one colour bar stands at the right edge,
right of every map (beside the first map it stood between raw attention and rollout)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402
from scipy import ndimage  # noqa: E402

STAR = Path(__file__).resolve().parents[2] / "assets" / "samples" / "shapes-star.png"


def _pictures(rgb: np.ndarray, solid: int) -> list[tuple[int, int, int, int]]:
    """(top, left, height, width) of every block inked through and through (not white, at least ``solid`` px each
    way: text strokes are thinner), largest first."""
    ink = (rgb < 245).any(axis=2)
    opened = ndimage.binary_opening(ink, structure=np.ones((solid, solid), bool))
    labels, n = ndimage.label(opened)
    boxes = [(s[0].start, s[1].start, s[0].stop - s[0].start, s[1].stop - s[1].start)
             for s in ndimage.find_objects(labels)]
    return sorted(boxes, key=lambda b: -b[2] * b[3])


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_rollout_slide_is_filled_by_large_pictures_with_the_bar_at_the_edge(qapp, tmp_path, size):
    from attnviz.export.batch import export_one
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    trace = run_trace(load_model("shapes", device="cpu"), image=str(STAR))
    out = tmp_path / "rollout.png"
    export_one("rollout", trace, SelectionState(), out, ExportOptions(width=size[0], height=size[1]), export_style())
    rgb = np.asarray(Image.open(out).convert("RGB")).astype(int)
    h, w = rgb.shape[:2]
    assert (w, h) == size
    blocks = _pictures(rgb, solid=max(8, h // 60))
    boxes = [b for b in blocks if min(b[2:]) >= 0.1 * h]
    assert len(boxes) == 4 and len(blocks) == 5, f"control: the input, three maps and the bar are solid ({blocks})"
    for top, left, bh, bw in boxes:
        assert abs(bh - bw) <= 3, f"a picture is not square: {bh} × {bw}"
        assert top >= 0.08 * h and left > 0 and top + bh < h and left + bw < w, f"a picture touches the page: {boxes}"
    covered = sum(bh * bw for _, _, bh, bw in boxes) / (w * h)
    maps = sorted(b[2] for b in boxes)[:3]
    # one row of four drew 395-px squares on 30 % of a 1920×1080 page (263 px, 30 % at 1280×720)
    assert covered >= 0.40, f"the pictures cover {covered:.0%} of the slide"
    assert min(maps) >= 0.29 * h, f"maps {maps} px on a {h}-px page"
    # the bar: its gradient is the rightmost coloured column band of the page, right of every picture
    coloured = (rgb.max(axis=2) - rgb.min(axis=2) > 40).any(axis=0)
    cols = np.flatnonzero(coloured)
    bar = cols[np.flatnonzero(np.diff(cols) > 1)[-1] + 1:]
    assert bar[-1] - bar[0] < 0.05 * w, f"control: the last coloured band is narrow ({bar[0]}–{bar[-1]})"
    assert bar[0] >= max(left + bw for _, left, _, bw in boxes), (
        f"the bar ({bar[0]}–{bar[-1]}) stands left of a picture's right edge {[(b[1], b[1] + b[3]) for b in boxes]}")
