"""A What-if panel on a bundled model, run and drawn: shared by the What-if layout tests."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

__all__ = ["TEXTS", "whatif_panel"]

TEXTS = {"coref": "The animal didn't cross the street because it was too tired",
         "translate": "the big dog sees a small cat"}


def whatif_panel(qtbot, model: str, size, style=None):
    """A shown :class:`WhatIfPanel` of ``size`` in ``style`` (default: the docked style), run on ``model``'s text."""
    from attnviz.gui.walkthrough import WhatIfPanel, sync_runner
    from attnviz.runtime import load_model

    panel = WhatIfPanel(run_async=sync_runner, style=style)
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_model(load_model(model, device="cpu"))
    panel.set_input(text=TEXTS[model])
    panel.rerun()
    qtbot.waitUntil(lambda: "P_after" in panel.grids, timeout=30_000)
    for _ in range(10):
        QApplication.processEvents()
    return panel
