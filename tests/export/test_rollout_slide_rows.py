"""The rollout slide of a vision model (issue 36 item 10), in the pixels of the written file: the row of pictures
sits in the middle of the room under the title (it was centred on an estimate that left out the layout's spacing:
~200 px blank above the row and ~280 px below on a 1920×1080 slide), and its one colour bar stands at the right
edge, right of every map (beside the first map it stood between raw attention and rollout)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

STAR = Path(__file__).resolve().parents[2] / "assets" / "samples" / "shapes-star.png"


def _blank_runs(ink_rows: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of every run of rows without ink."""
    runs, start = [], None
    for y, ink in enumerate(list(ink_rows) + [True]):
        if not ink and start is None:
            start = y
        elif ink and start is not None:
            runs.append((start, y - start))
            start = None
    return runs


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_rollout_row_sits_in_the_middle_with_its_bar_at_the_edge(qapp, tmp_path, size):
    from attnviz.export.batch import export_one
    from attnviz.figures.registry import export_style
    from attnviz.figures.render import ExportOptions
    from attnviz.runtime import load_model, run_trace
    from attnviz.selection import SelectionState

    trace = run_trace(load_model("shapes", device="cpu"), image=str(STAR))
    out = tmp_path / "rollout.png"
    export_one("rollout", trace, SelectionState(), out, ExportOptions(width=size[0], height=size[1]), export_style())
    grey = np.asarray(Image.open(out).convert("L")).astype(int)
    h, w = grey.shape
    assert (w, h) == size
    runs = _blank_runs((grey < 200).any(axis=1))
    above = max(runs[:-1], key=lambda r: r[1])  # the widest blank band between the title and the captions
    below = runs[-1]
    assert below[0] + below[1] == h, "control: the page ends blank"
    assert above[0] < below[0] and above[1] > 0.05 * h, f"control: a band under the title ({runs})"
    assert abs(above[1] - below[1]) <= 0.15 * (above[1] + below[1]) / 2, (
        f"{above[1]} px blank above the row of pictures, {below[1]} px below")
    # the bar: its gradient is the rightmost coloured column band of the page
    rgb = np.asarray(Image.open(out).convert("RGB")).astype(int)
    coloured = (rgb.max(axis=2) - rgb.min(axis=2) > 40).any(axis=0)
    cols = np.flatnonzero(coloured)
    gaps = np.flatnonzero(np.diff(cols) > 1)  # where one coloured block ends and the next begins
    blocks = np.split(cols, gaps + 1)
    widths = [int(b[-1] - b[0] + 1) for b in blocks]
    assert len(blocks) >= 5, f"control: four pictures and a bar ({widths})"
    assert widths[-1] < 0.05 * w <= min(widths[:4]), f"the narrow bar is not the last block on the page: {widths}"
