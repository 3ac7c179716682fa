"""The window on a small screen (a 1280×720 projector): the same docks, arranged for the head map.

Below ``COMPACT_LINES`` of window height the input dock is one line tall (the sentence on one line; the
examples box and the token strip, whose tokens the head map's axes name anyway, hidden) and the model
list narrows, so the views get the height and width; at a larger height everything is as it was. The
main window calls :func:`arrange_for_size` from its resize event; the arrangement is undone when the
window grows again.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer

__all__ = ["COMPACT_LINES", "is_compact", "arrange_for_size", "views_share"]

COMPACT_LINES = 800  # window heights below this are arranged for the head map
MODEL_LIST_SHARE = 0.22  # of a compact window's width for the model list and prediction (400 px at 1080 lines)
HEAD_MAP_SHARE = 0.72  # of the views' width for the head map's group (the whole model's group: the rest)


def is_compact(height: int) -> bool:
    """Whether a window this tall gets the compact arrangement."""
    return 0 < height < COMPACT_LINES


def arrange_for_size(win) -> None:
    """Input one line tall and a narrower model list when the window is compact; restored otherwise."""
    compact = is_compact(win.height())
    key = (compact, win.width() if compact else 0)  # a compact window re-splits at each new width
    if getattr(win, "_compact", None) == key:
        return
    win._compact = key
    panel = getattr(win, "input_panel", None)
    if panel is not None and panel.compact != compact:
        panel.set_compact(compact)
    docks = getattr(win, "docks", {})
    if compact and "ModelDock" in docks:
        win.resizeDocks([docks["ModelDock"]], [int(win.width() * MODEL_LIST_SHARE)], Qt.Orientation.Horizontal)
    area = getattr(win, "views_area", None)
    if area is not None and compact and not getattr(area, "_compact_hooked", False):
        # the views are docked after the window is sized (start-up): split them once they are
        area._compact_hooked = True
        area.views_installed.connect(lambda: is_compact(win.height()) and QTimer.singleShot(
            100, area, lambda: _split_views(area, views_share(win))))
    if area is not None and compact:
        # once the docks are laid out at the new size: the split is in pixels (a larger window keeps
        # the split it has, the user's or the first start's)
        QTimer.singleShot(0, area, lambda: _split_views(area, HEAD_MAP_SHARE))


def views_share(win) -> float:
    """The head map group's share of the views' width for this window (see HEAD_MAP_SHARE)."""
    return HEAD_MAP_SHARE if is_compact(win.height()) else 0.55


def _split_views(area, share: float) -> None:
    """The head map's group (the single-head readings) gets ``share`` of the views' width."""
    if not area.isVisible():  # a window being closed (or not shown yet): nothing to split
        return
    group = area.left_group  # not imported from views_area, which imports this module
    left = [d for n, d in area.docks.items() if n in group and not d.isFloating()]
    right = [d for n, d in area.docks.items() if n not in group and not d.isFloating()]
    if left and right:
        width = area.width()
        area.resizeDocks([left[0], right[0]], [int(width * share), int(width * (1 - share))],
                         Qt.Orientation.Horizontal)
