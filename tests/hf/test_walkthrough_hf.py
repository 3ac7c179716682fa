"""The walkthrough tab on a Hugging Face rotary GQA model and on Gemma 2: the rotation, soft-cap and sliding
window on screen are the numbers of ``attnviz steps --json`` (pytest-qt)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnviz.analysis.steps import compute_six_steps  # noqa: E402
from attnviz.hf.capture import capture_hf  # noqa: E402
from attnviz.selection import Selection  # noqa: E402

from .tiny_models import build, tokens_of  # noqa: E402


def _trace(name):
    model, inputs = build(name)
    return capture_hf(model, inputs, tokens_of(inputs, model))


def _shown(grid) -> np.ndarray:
    rows, cols = grid.values.shape
    return np.array([[float(grid.exact_text(r, c)) for c in range(cols)] for r in range(rows)])


@pytest.mark.parametrize("name,step,fields", [
    ("qwen2", "rotate", ("q_pre_rope_i", "rope_cos_i", "rope_sin_i", "q_i", "k_pre_rope", "k", "distance",
                         "scores_by_distance")),
    ("gemma2", "scale", ("scores", "scaled", "capped")),
    ("gemma2", "mask", ("scaled", "mask", "masked")),
])
def test_walkthrough_shows_what_modern_attention_adds(name, step, fields, qtbot):
    from attnviz.gui.walkthrough import WalkthroughWidget

    trace = _trace(name)
    sel = Selection()
    sel.update(layer=0, head=3, query=len(trace.tokens) - 1)
    w = WalkthroughWidget(sel)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    w.set_trace(trace)
    assert ("rotate" in w.step_list) and w.step_list[:3] == ["project", "rotate", "score"]
    assert w.gqa.isVisible() and (w.gqa.n_heads, w.gqa.n_kv_heads) == (4, 2)
    w.set_step(w.step_list.index(step))
    s = compute_six_steps(trace, 0, 3, len(trace.tokens) - 1)
    for field in fields:
        want = np.asarray(getattr(s, field) if field != "scaled" or not s.softcap or step != "mask" else s.capped,
                          dtype=np.float64)
        shown = _shown(w.grids[field])
        finite = np.isfinite(want.reshape(shown.shape))
        np.testing.assert_allclose(shown[finite], want.reshape(shown.shape)[finite], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["qwen2", "qwen3"])
def test_step_one_of_a_rotary_model_shows_the_products_not_the_rotated_vectors(name, qtbot):
    """Step 1 is headed "q_i = x_i W_Q": on a rotary model its q_i is x_i W_Q (+ b_Q) itself and its K the keys
    before the rotation (Qwen3: after the model's per-head norm, and labelled so); the rotated ones, shown
    there before, belong to the rotary panel that follows. Control: the rotated q differs from what is shown."""
    from attnviz.gui.walkthrough import WalkthroughWidget

    trace = _trace(name)
    sel = Selection()
    q = len(trace.tokens) - 1
    sel.update(layer=0, head=1, query=q)
    w = WalkthroughWidget(sel)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    w.set_trace(trace)
    w.set_step(w.step_list.index("project"))
    s = compute_six_steps(trace, 0, 1, q)
    product = s.x_i.astype(np.float64) @ s.W_Q.astype(np.float64) + (0 if s.b_Q is None else s.b_Q)
    shown_q = _shown(w.grids["q_proj_i"]).ravel()
    np.testing.assert_allclose(shown_q, product, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(_shown(w.grids["k_pre_rope"]), s.k_pre_rope, rtol=1e-3, atol=1e-3)
    assert "q_i" not in w.grids and "k" not in w.grids  # the rotated vectors are not on this step
    assert np.abs(shown_q - s.q_i).max() > 1e-2  # control: the rotation changed q (position > 0)
    title = w.grids["k_pre_rope"].title
    assert "unrotated" in title and ("head-normed" in title) == bool(s.qk_norm)
    assert "unrotated" in w.grids["q_proj_i"].title
