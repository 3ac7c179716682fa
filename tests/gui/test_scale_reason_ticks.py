"""The √d_k figure's d_k axis (issue 36, finding 10): its labels ran together ("64128256") in each third-wide
plot. Labelled ticks must be further apart than their labels are wide, at the export's layout."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402


def _collisions(ticks, px_per_unit: float, fm) -> list[str]:
    out = []
    for (a, ta), (b, tb) in zip(ticks, ticks[1:]):
        gap = (b - a) * px_per_unit
        need = (fm.horizontalAdvance(ta) + fm.horizontalAdvance(tb)) / 2 + fm.horizontalAdvance(" ")
        if gap < need:
            out.append(f"{ta}|{tb}: {gap:.0f} px apart, labels need {need:.0f}")
    return out


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_dk_axis_labels_do_not_run_together(qapp, size):
    from attnviz.bench.traces import sample_trace
    from attnviz.figures.render import layout_scale
    from attnviz.figures.registry import make_figure
    from attnviz.gui.views.scale_reason_view import dk_ticks
    from attnviz.selection import SelectionState

    trace = sample_trace("encoder", T=8, n_layers=2, n_heads=4)
    view, _ = make_figure("scale-reason", trace, SelectionState(layer=0, head=0), None, None)
    w, h = size
    s = layout_scale(w, h)
    view._relayout(QRectF(0, 0, w / s, h / s))
    for plot in view.plots.values():
        axis = plot.getAxis("bottom")
        lo, hi = plot.vb.viewRange()[0]
        px_per_unit = plot.vb.width() / (hi - lo)
        fm = QFontMetricsF(axis.style.get("tickFont") or axis.font())
        labelled = dk_ticks(view.data["d_ks"])[0]
        assert len(labelled) >= 3 and not _collisions(labelled, px_per_unit, fm), _collisions(labelled, px_per_unit, fm)
        # control: every d_k labelled (the old axis) collides at this width
        minor = dk_ticks(view.data["d_ks"])[1]
        assert all(label == "" for _, label in minor)  # unlabelled: pyqtgraph would draw them where fill allows
        every = sorted(labelled + [(v, str(round(2 ** v))) for v, _ in minor])
        assert _collisions(every, px_per_unit, fm)
    view.close()


def test_a_trace_beyond_the_figures_length_says_so(qapp, monkeypatch):
    """Beyond its stated length the √d_k view says in its title why it draws nothing (control: under it, the
    figure's own title)."""
    from attnviz.analysis import scaling
    from attnviz.bench.traces import sample_trace
    from attnviz.figures.registry import make_figure
    from attnviz.selection import SelectionState

    trace = sample_trace("encoder", T=8, n_layers=2, n_heads=4)
    view, _ = make_figure("scale-reason", trace, SelectionState(layer=0, head=0), None, None)
    view.ensure_current()
    assert "shorten" not in view.title_item.text and view.data is not None
    monkeypatch.setattr(scaling, "MAX_KEYS", 7)
    view._recompute()
    assert view.data is None and "shorten the input" in view.title_item.text
