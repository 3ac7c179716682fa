"""The what-if lab never re-runs one model's input on another model (issue 13: after switching from a
text model to a vision model with the What-if tab open it ran the old text on the new model and showed
"… is a vision model: give it an image, not text")."""

from __future__ import annotations

import numpy as np

from attnviz.gui.walkthrough.runners import sync_runner
from attnviz.gui.walkthrough.whatif_panel import WhatIfPanel
from attnviz.runtime import load_model

TEXT = "the cat sat on the mat"


def test_a_new_model_is_run_on_its_own_input_or_on_nothing(tiny_assets, qtbot):
    runs = []

    def runner(kind, fn, on_result, on_error):
        runs.append(fn.args[:4])  # (model, switches, text, image) the job was given
        sync_runner(kind, fn, on_result, on_error)

    text_model = load_model(str(tiny_assets / "models" / "tiny-encoder"), device="cpu")
    vision_model = load_model(str(tiny_assets / "models" / "tiny-vit"), device="cpu")
    panel = WhatIfPanel(run_async=runner, debounce_ms=0)
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_model(text_model)
    panel.set_input(text=TEXT)
    panel.rerun()
    assert panel.comparison is not None and runs[-1][2] == TEXT
    panel.set_model(vision_model)  # the window hands over the new model before its first trace
    panel.rerun()
    assert all(r[0] is text_model for r in runs if r[2] == TEXT)  # the text never went to the image model
    assert panel.comparison is None and "vision" not in panel.message
    assert panel.message == "load a model and run an input first"
    image = np.random.default_rng(0).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    panel.set_input(image=image)  # the new model's own input, from its trace
    panel.rerun()
    assert runs[-1][0] is vision_model and runs[-1][2] is None and runs[-1][3] is image
    assert panel.comparison is not None and panel.message == ""


def test_ablation_grid_has_a_row_label_only_for_each_layer_of_the_loaded_model(tiny_assets, qtbot):
    """After a 3-layer model, a 2-layer one: no "L2" label is left without its check boxes."""
    from PySide6.QtWidgets import QLabel

    from dataclasses import replace

    two = load_model(str(tiny_assets / "models" / "tiny-encoder"), device="cpu")
    three = replace(two, config=replace(two.config, n_layers=3))  # only the shape of the grid is read
    panel = WhatIfPanel(run_async=lambda *a: None, debounce_ms=0)
    qtbot.addWidget(panel)
    panel.set_model(three)
    panel.set_model(two)
    grid = panel.heads_grid
    labels = [grid.itemAt(i).widget().text() for i in range(grid.count())
              if isinstance(grid.itemAt(i).widget(), QLabel)]
    assert labels == ["L0", "L1"]
    assert sorted(panel.head_checks) == [(layer, h) for layer in range(2) for h in range(two.config.n_heads)]
