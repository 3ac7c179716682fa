"""Gradient-weighted rollout (Chefer et al.) against an element-by-element loop."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis import compute_grad_rollout
from attnviz.capture import capture
from attnviz.errors import InputError

from tests.models.tiny import build_tiny, make_inputs


def _loop_relevance(probs, grads, start_layer=0):
    T = probs[0].shape[-1]
    R = [[1.0 if i == j else 0.0 for j in range(T)] for i in range(T)]
    for p, g in list(zip(probs, grads))[start_layer:]:
        H = p.shape[0]
        cam = [[sum(max(0.0, float(g[h, i, j]) * float(p[h, i, j])) for h in range(H)) / H for j in range(T)]
               for i in range(T)]
        R = [[R[i][j] + sum(cam[i][m] * R[m][j] for m in range(T)) for j in range(T)] for i in range(T)]
    return np.array(R)


@pytest.fixture(scope="module")
def grad_trace():
    model = build_tiny("encoder", n_layers=3)
    inputs, tokens = make_inputs(model, T=5)
    return capture(model, inputs, tokens, grad=True)


def test_trace_holds_gradients(grad_trace):
    for i in range(grad_trace.n_layers):
        g = grad_trace[f"L{i}.grad"]
        assert g.shape == grad_trace[f"L{i}.probs"].shape and np.abs(g).max() > 0


@pytest.mark.parametrize("start_layer", [0, 2])
def test_grad_rollout_matches_a_loop(grad_trace, start_layer):
    probs = grad_trace.all_probs()
    grads = [grad_trace[f"L{i}.grad"] for i in range(grad_trace.n_layers)]
    expected = _loop_relevance(probs, grads, start_layer)
    np.testing.assert_allclose(compute_grad_rollout(probs, grads, start_layer=start_layer), expected, atol=1e-10)
    np.testing.assert_allclose(compute_grad_rollout(grad_trace, start_layer=start_layer), expected, atol=1e-10)
    assert not np.allclose(expected, np.eye(5))


def test_gradient_is_of_the_target_logit():
    # One layer, classification from the CLS position: the logit depends on the attention of
    # query 0 only, so every other row of d(logit)/d(probs) is exactly 0. Row 0 is (d logit/d z_0)·Vᵀ,
    # so it lies in the span of the value vectors (a real constraint: T = 6 keys, d_head = 4).
    model = build_tiny("encoder", n_layers=1)
    inputs, tokens = make_inputs(model, T=6)
    t0 = capture(model, inputs, tokens, grad=True, target=0)
    t1 = capture(model, inputs, tokens, grad=True, target=1)
    assert not np.allclose(t0["L0.grad"], t1["L0.grad"])
    for trace in (t0, t1):
        g = trace["L0.grad"].astype(np.float64)  # (H, T, T)
        v = trace["L0.v"].astype(np.float64)  # (H_kv, T, dh)
        assert np.all(g[:, 1:] == 0) and np.all(np.abs(g[:, 0]).max(-1) > 0)
        for h in range(g.shape[0]):
            coef, *_ = np.linalg.lstsq(v[h], g[h, 0], rcond=None)
            np.testing.assert_allclose(v[h] @ coef, g[h, 0], atol=1e-6)
        random_row = np.random.default_rng(0).normal(size=6)
        coef, *_ = np.linalg.lstsq(v[0], random_row, rcond=None)
        assert np.abs(v[0] @ coef - random_row).max() > 1e-3  # the span check can fail


def test_missing_gradients_are_a_clear_error():
    model = build_tiny("encoder")
    inputs, tokens = make_inputs(model)
    with pytest.raises(InputError, match="grad=True"):
        compute_grad_rollout(capture(model, inputs, tokens))
