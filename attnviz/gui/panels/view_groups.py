"""The attention views' two dock groups, tabbed into one in a compact window and apart again at a larger size;
and the views a model has nothing for (the patch filters of a text model), closed while it is shown.

At 1280×720 the head map's group beside the whole model's left the head map's figure ~38 % of the window's
area; tabbed into one group the head map gets the views' whole width (~55 %), and All heads is one tab
away. Functions of a :class:`~attnviz.gui.panels.views_area.ViewsArea` (``area``), which keeps ``merged``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

__all__ = ["groups", "merge", "offer_again", "offer_for_model", "save_state", "split_back"]


def groups(area) -> tuple[list[QDockWidget], list[QDockWidget]]:
    """The docked (not floating) docks of the head map's group and of the whole model's."""
    left = [d for n, d in area.docks.items() if n in area.left_group and not d.isFloating()]
    right = [d for n, d in area.docks.items() if n not in area.left_group and not d.isFloating()]
    return left, right


def merge(area) -> None:
    """Tab the whole model's views into the head map's group (a compact window): one row of tabs across
    the views' width, so the head map gets it all (beside All heads it had 38 % of a 1280×720 window's
    area). :func:`split_back` undoes it."""
    left, right = groups(area)
    if area.merged or not left or not right:
        return
    front = [d for d in left + right if area.on_screen(d.objectName())]
    area._arranging = True  # (the area's own flag: build no view while Qt re-tabs its docks)
    try:
        for dock in right:
            area.tabifyDockWidget(left[0], dock)
    finally:
        area._arranging = False
    area.merged = True
    for dock in front[:1]:  # the head map's group's tab in front stays in front
        QDockWidget.raise_(dock)


def split_back(area, resplit: bool = True) -> None:
    """The whole model's views back in their own group on the right (the window left the compact size);
    with ``resplit``, the groups' widths are set again once laid out."""
    left, right = groups(area)
    if not area.merged:
        return
    area.merged = False
    if not right:
        return
    front = [d for d in left if area.on_screen(d.objectName())]
    hidden = {d for d in right if d.isHidden()}
    area._arranging = True
    try:
        for i, dock in enumerate(right):
            area.removeDockWidget(dock)
            if i == 0:
                area.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
            else:
                area.tabifyDockWidget(right[0], dock)
            dock.setVisible(dock not in hidden)
    finally:
        area._arranging = False
    shown = [d for d in right if d not in hidden]
    for dock in shown[:1] + front[:1]:
        QDockWidget.raise_(dock)
    if resplit and left:
        area._split_timer.start(0)


def offer_for_model(area, trace, config=None) -> None:
    """Close the docks whose view has nothing for ``trace``'s model (the class's ``not_offered_for(trace)`` gives
    the reason), their View ▸ Panels entries disabled with the reason as tooltip; open them again for a model
    they serve. Only docks closed here come back: one the user closed stays closed. (A text model's "Patch
    filters" tab showed one line saying it belongs to image models, and took a tab of a full row.)
    With no trace, ``config``: a model just loaded (``not_offered_for_model``), its tabs before its first run
    (issue 36: shapes, loaded and not run yet, showed translate's tab set over "no input yet")."""
    if config is not None:
        area.offered_config = config  # what a restored layout is fitted to again while no trace is shown
    if trace is None and config is None:  # a cleared input: the same model, nothing to change
        return
    closed = getattr(area, "not_offered", None)  # dock name -> why it is closed
    if closed is None:
        closed = area.not_offered = {}
    changed = False
    for name, dock in area.docks.items():
        cls = area._classes.get(name)
        ask = getattr(cls, "not_offered_for" if trace is not None else "not_offered_for_model", None)
        reason = ask(trace if trace is not None else config) if ask is not None else None
        action = dock.toggleViewAction()
        action.setEnabled(reason is None)
        action.setToolTip(reason or dock.toolTip())
        if reason is not None and name not in closed and (not dock.isHidden() or name in area.folded):
            if name in area.folded:
                area.folded.remove(name)  # (a compact window's menu must not offer it back)
            closed[name] = reason
            dock.hide()
            changed = True
        elif reason is None and name in closed:
            del closed[name]
            dock.show()
            changed = True
    if changed:  # a tab more or fewer: a compact window's rows are fitted again (patch filters back for shapes
        area.offers_changed.emit()  # overflowed the 1280×720 row by 35 px)


def offer_again(area) -> None:
    """After a layout is restored: the docks closed for the model shown closed again (the layout has them open)."""
    area.not_offered = {}
    offer_for_model(area, getattr(area, "_trace", None), getattr(area, "offered_config", None))


def save_state(area, save):
    """``save()`` (QMainWindow.saveState) with the folded docks and those closed for this model open, and the
    two groups apart: folding, merging and closing are for this window size and model, not a user's choice (a
    layout saved at 1280×720 and restored at 1920×1080 kept one group; one saved with a text model would hide
    an image model's patch filters at the next start)."""
    folded = area.unfold()
    closed = dict(getattr(area, "not_offered", None) or {})
    for name in closed:
        area.docks[name].show()
    merged = area.merged
    split_back(area, resplit=False)
    try:
        return save()
    finally:
        if merged:
            merge(area)
        area.fold(folded)
        for name in closed:
            area.docks[name].hide()
