"""A What-if panel on a bundled model, run and drawn: shared by the What-if layout tests."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

__all__ = ["TEXTS", "whatif_panel"]

TEXTS = {"coref": "The animal didn't cross the street because it was too tired",
         "translate": "the big dog sees a small cat"}


def whatif_panel(qtbot, model: str, size, style=None):
    """A shown :class:`WhatIfPanel` of ``size`` in ``style`` (default: the docked style), run on ``model``'s text
    (or, for a vision model, its task's example image)."""
    from attnviz.gui.walkthrough import WhatIfPanel, sync_runner
    from attnviz.runtime import load_model, task_of

    panel = WhatIfPanel(run_async=sync_runner, style=style)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    loaded = load_model(model, device="cpu")
    panel.set_model(loaded)
    if model in TEXTS:
        panel.set_input(text=TEXTS[model])
    else:  # a vision model (shapes): the image the app opens it on
        panel.set_input(image=task_of(loaded).example_input())
    panel.rerun()
    qtbot.waitUntil(lambda: "P_after" in panel.grids, timeout=30_000)
    for _ in range(10):
        QApplication.processEvents()
    return panel
