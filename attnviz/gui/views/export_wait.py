"""Figures built for an export that waits for their background work instead of computing it on the GUI thread.

A long input's All heads page recomputes every head from q and k (about 10 s for 36 heads at 4,096 tokens on a
30-layer × 9-head model). The synchronous exports (the command line, :func:`~attnviz.gui.dialogs.export_dialog.
export_current_view`) still finish such work at once (``ensure_current``); the app's export
(:class:`~attnviz.gui.figure_export.FigureExport`) builds its figure within :func:`waiting_export`: a view made
there leaves its heavy work on the views' lane, says what it is doing (:func:`pending_text`), and the exporter
paints it once that work has arrived, the window answering meanwhile.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["waiting_export", "builds_waiting_figure", "figure_waits", "pending_text"]

_building = [0]  # GUI thread only: figures are built there


@contextmanager
def waiting_export():
    """Figures built within this block wait for their background work (see the module docstring)."""
    _building[0] += 1
    try:
        yield
    finally:
        _building[0] -= 1


def builds_waiting_figure() -> bool:
    """True while a figure for a waiting export is built (a view reads it once, when it is made)."""
    return bool(_building[0])


def figure_waits(fig) -> bool:
    """True when ``fig`` was built for a waiting export and has background work not delivered yet."""
    return bool(getattr(fig, "export_waits", False)) and bool(getattr(fig, "background_pending", False))


def pending_text(fig) -> str:
    """What ``fig`` is computing for the export, e.g. "computing heads 12/36 for the export"."""
    text = getattr(fig, "export_pending_text", None)
    return (text() if callable(text) else "") or "computing the figure for the export"
