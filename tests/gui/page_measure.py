"""Measure a figure as an export lays it out to paint: ``render_image`` on a w × h page, with ``measure(fig, scale)``
called inside ``figure.page_layout`` (the figure at its page size and label floor; ``scale``: page px per layout px).
Patching the grids' paintEvent to measure them crashed shiboken on the second export."""

from __future__ import annotations

from contextlib import contextmanager


def measured_export(view, w: int, h: int, monkeypatch, measure):
    """What ``measure(fig, scale)`` returned while ``view`` was laid out for a w × h page (None if never)."""
    import attnviz.gui.walkthrough.figure as figure
    from attnviz.figures.render import ExportOptions, _body, layout_scale, render_image

    opts = ExportOptions(width=w, height=h)
    body = _body(opts)
    scale = layout_scale(body.width(), body.height())
    seen = []
    laid_out = figure.page_layout

    @contextmanager
    def measured(host, fig, target, page_scale):
        with laid_out(host, fig, target, page_scale) as board:
            seen[:] = [measure(fig, scale)]
            yield board

    monkeypatch.setattr(figure, "page_layout", measured)
    try:
        render_image(view, opts)
    finally:
        monkeypatch.setattr(figure, "page_layout", laid_out)
    return seen[0] if seen else None
