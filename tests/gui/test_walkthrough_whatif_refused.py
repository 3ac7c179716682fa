"""What if on a Hugging Face model: the switches greyed with the reason and no ablation grid. Before, a
30 × 9 model got 270 live-looking boxes (h6–h8 cut off at the side's right edge) and a scale, temperature
and mask that only ever answered "the what-if switches work on attnviz's own models" (seen at both sizes)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from attnviz.gui.walkthrough.whatif_panel import WhatIfPanel  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402

import real_sizes  # noqa: E402

TEXT = "the cat sat on the mat"


def _panel(qtbot, runs):
    panel = WhatIfPanel(run_async=lambda kind, fn, ok, err: runs.append(kind), debounce_ms=0)
    qtbot.addWidget(panel)
    panel.resize(1200, 800)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_hugging_face_model_greys_the_switches_and_says_why_without_a_run(qtbot, tmp_path):
    runs = []
    panel = _panel(qtbot, runs)
    panel.set_model(load_model(str(real_sizes.build("30x9", tmp_path / "m")), device="cpu"))
    panel.set_input(text=TEXT)
    panel.rerun()
    assert not panel.switches_box.isEnabled() and not panel.scale_box.isEnabled()
    assert panel.head_checks == {}
    assert "not on Hugging Face models" in panel.message and "not on Hugging Face models" in panel.switches_box.toolTip()
    assert runs == []  # nothing run that could only fail


def test_an_attnviz_model_keeps_live_switches_and_its_grid(qtbot, tiny_assets):  # the negative control
    runs = []
    panel = _panel(qtbot, runs)
    loaded = load_model(str(tiny_assets / "models" / "tiny-encoder"), device="cpu")
    panel.set_model(loaded)
    panel.set_input(text=TEXT)
    panel.rerun()
    assert panel.switches_box.isEnabled() and panel.scale_box.isEnabled()
    assert len(panel.head_checks) == loaded.config.n_layers * loaded.config.n_heads
    assert runs == ["compare"] and panel.switches_box.toolTip() == ""
