"""The first map comes from the bundled model's stored opening trace, before the model has loaded;
the live run of the same sentence then replaces it with the same numbers, the views never cleared."""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.checkpoint import save_checkpoint
from attnviz.models.registry import build_model
from attnviz.runtime.opening import write_opening_trace
from attnviz.tasks import get_task


def _bundled_coref(root):
    task = get_task("coref")
    cfg = task.model_config(d_model=16, n_heads=2)
    torch.manual_seed(0)
    folder = save_checkpoint(root / "models" / "coref", build_model(cfg).eval(), cfg, {"task": "coref", **task.info()},
                             tokenizer=task.tokenizer)
    write_opening_trace(folder)
    return task.example_input()


def test_stored_trace_is_drawn_first_and_the_live_one_replaces_it(make_window, qtbot, tmp_path, monkeypatch):
    example = _bundled_coref(tmp_path)
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(tmp_path))
    win = make_window(start=False, model="coref")
    cleared = []
    win.views_area.set_trace = (lambda f: lambda t: (cleared.append(t is None), f(t)))(win.views_area.set_trace)
    win.install_views_now()  # the views are in: what start-up does once pyqtgraph is imported
    assert win.loaded is None and win.trace is not None  # drawn before any model exists
    stored = win.trace
    assert stored.meta["opening_text"] == example and win.input_panel.text == example
    head_map = next(v for v in win.views_area.views if type(v).__name__ == "HeadMapView")
    assert head_map.trace is stored
    with qtbot.waitSignal(win.trace_shown, timeout=120000):
        win.start()
    live = win.trace
    assert win.loaded is not None and live is not stored and live.meta.get("opening_text") is None
    assert live.tokens == stored.tokens
    for i in range(live.n_layers):
        np.testing.assert_allclose(live[f"L{i}.probs"], stored[f"L{i}.probs"], atol=1e-6)
    assert not any(cleared)  # the views went from the stored trace straight to the live one


def test_a_stale_opening_trace_is_not_shown(make_window, tmp_path, monkeypatch):
    _bundled_coref(tmp_path)
    weights = tmp_path / "models" / "coref" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # other weights than the trace was made from
    weights.write_bytes(bytes(data))
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(tmp_path))
    win = make_window(start=False, model="coref")
    win.install_views_now()
    assert win.trace is None
