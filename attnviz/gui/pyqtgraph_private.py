"""Every private pyqtgraph name attnviz uses, in one place.

Supported: pyqtgraph 0.14 (the lower bound in pyproject.toml; 0.14.0 is also the newest release and the
installed one when this was written). ``tests/gui/test_pyqtgraph_private.py`` checks each name at the installed
version and, once that is newer, at 0.14.0 in a subprocess. pyqtgraph offers no public route to these:

- ``ImageItem._renderRequired`` / ``_unrenderable``: the flags ``ImageItem.render`` clears when its QImage is
  ready; ``paint`` renders again while they are set. attnviz's heatmap builds the QImage itself (one lookup of
  a premultiplied colour table) and clears them as pyqtgraph's own ``render`` does.
- ``AxisItem._updateLabel``: redraws the axis label after its unit prefix changed (the public ``setLabel``
  would reset the units the caller set).
- ``GraphicsWidget._sizeHint``: the minimum and preferred sizes a ``LabelItem`` reports; pyqtgraph makes its
  text's width the minimum, which stops a caption from wrapping in a narrow dock.
"""

from __future__ import annotations

__all__ = ["mark_image_rendered", "update_axis_label", "set_size_hint"]


def mark_image_rendered(item) -> None:
    """Tell ImageItem ``item`` its ``qimage`` is current (what the end of ``ImageItem.render`` does)."""
    item._renderRequired = False
    item._unrenderable = False


def update_axis_label(axis) -> None:
    """Redraw AxisItem ``axis``'s label from its current text, units and unit prefix."""
    axis._updateLabel()


def set_size_hint(item, which, size: tuple[float, float]) -> None:
    """Make pyqtgraph GraphicsWidget ``item`` report ``size`` (width, height) for Qt size hint ``which``."""
    item._sizeHint[which] = size
