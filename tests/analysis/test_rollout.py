"""Attention rollout on a 3-token, 2-layer example worked out by hand, plus its options."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis import compute_rollout
from attnviz.analysis.rollout import discard_lowest
from attnviz.capture import capture
from attnviz.errors import InputError

from tests.models.tiny import build_tiny, make_inputs

# Layer 0 has two heads: head a sends everything to token 0, head b to the next token (the last
# token to itself). Layer 1 swaps tokens 0 and 2 (both heads alike).
HEAD_A = [[1, 0, 0], [1, 0, 0], [1, 0, 0]]
HEAD_B = [[0, 1, 0], [0, 0, 1], [0, 0, 1]]
SWAP = [[0, 0, 1], [0, 1, 0], [1, 0, 0]]
PROBS = [np.array([HEAD_A, HEAD_B], float), np.array([SWAP, SWAP], float)]


def test_hand_worked_mean_rollout():
    # layer 0: mean of heads = [[.5,.5,0],[.5,0,.5],[.5,0,.5]];  ½·mean + ½·I =
    #   [[.75,.25,0],[.25,.5,.25],[.25,0,.75]]  (rows already sum to 1)
    # layer 1: ½·SWAP + ½·I = [[.5,0,.5],[0,1,0],[.5,0,.5]]
    # rollout = layer1 · layer0:
    #   row 0 = ½·[.75,.25,0] + ½·[.25,0,.75] = [.5,.125,.375];  row 1 = [.25,.5,.25];  row 2 = row 0
    expected = np.array([[0.5, 0.125, 0.375], [0.25, 0.5, 0.25], [0.5, 0.125, 0.375]])
    np.testing.assert_allclose(compute_rollout(PROBS), expected, atol=1e-12)


def test_hand_worked_start_layer():
    # only layer 1 counts: ½·SWAP + ½·I
    expected = np.array([[0.5, 0, 0.5], [0, 1, 0], [0.5, 0, 0.5]])
    np.testing.assert_allclose(compute_rollout(PROBS, start_layer=1), expected, atol=1e-12)


def test_hand_worked_max_fusion():
    # layer 0: max of heads = [[1,1,0],[1,0,1],[1,0,1]]; ½·max + ½·I = [[1,.5,0],[.5,.5,.5],[.5,0,1]]
    #   rows sum to 1.5 → [[2/3,1/3,0],[1/3,1/3,1/3],[1/3,0,2/3]]
    # rollout row 0 = ½·[2/3,1/3,0] + ½·[1/3,0,2/3] = [1/2,1/6,1/3]; row 1 = [1/3,1/3,1/3]; row 2 = row 0
    expected = np.array([[1 / 2, 1 / 6, 1 / 3], [1 / 3, 1 / 3, 1 / 3], [1 / 2, 1 / 6, 1 / 3]])
    np.testing.assert_allclose(compute_rollout(PROBS, fusion="max"), expected, atol=1e-12)


def test_hand_worked_min_fusion():
    # layer 0: the heads never agree, min = 0 → ½·I, renormalised to I; rollout = layer 1 alone
    expected = np.array([[0.5, 0, 0.5], [0, 1, 0], [0.5, 0, 0.5]])
    np.testing.assert_allclose(compute_rollout(PROBS, fusion="min"), expected, atol=1e-12)


def test_hand_worked_discard():
    # discard 0.5 → int(0.5·3·2) = 3 lowest off-diagonal entries per layer.
    # layer 0 off-diagonal (row-major): (0,1)=.5 (0,2)=0 (1,0)=.5 (1,2)=.5 (2,0)=.5 (2,1)=0
    #   → the two zeros and, ties broken by position, (0,1): fused = [[.5,0,0],[.5,0,.5],[.5,0,.5]]
    #   ½·fused + ½·I = [[.75,0,0],[.25,.5,.25],[.25,0,.75]] → row 0 renormalised to [1,0,0]
    # layer 1 off-diagonal: (0,1)=0 (0,2)=1 (1,0)=0 (1,2)=0 (2,0)=1 (2,1)=0 → zeros go, nothing changes
    # rollout row 0 = ½·[1,0,0] + ½·[.25,0,.75] = [.625,0,.375]; row 1 = [.25,.5,.25]; row 2 = row 0
    expected = np.array([[0.625, 0, 0.375], [0.25, 0.5, 0.25], [0.625, 0, 0.375]])
    np.testing.assert_allclose(compute_rollout(PROBS, discard=0.5), expected, atol=1e-12)


def test_discard_never_touches_the_diagonal():
    fused = np.full((4, 4), 0.25)
    np.fill_diagonal(fused, 0.0)  # the diagonal is the smallest, yet stays
    out = discard_lowest(fused + np.eye(4) * 1e-3, 0.9)
    np.testing.assert_array_equal(np.diag(out), np.full(4, 1e-3))
    assert (out[~np.eye(4, dtype=bool)] == 0).sum() == int(0.9 * 12)


def test_residual_extremes_and_row_sums():
    rng = np.random.default_rng(0)
    probs = [rng.dirichlet(np.ones(5), size=(3, 5)) for _ in range(3)]  # (H, T, T) rows sum to 1
    np.testing.assert_allclose(compute_rollout(probs, residual=1.0), np.eye(5), atol=1e-12)
    # residual 0: the plain product of the head-averaged maps, last layer on the left
    product = probs[2].mean(0) @ probs[1].mean(0) @ probs[0].mean(0)
    np.testing.assert_allclose(compute_rollout(probs, residual=0.0), product, atol=1e-12)
    for kw in ({}, {"fusion": "max"}, {"fusion": "min", "discard": 0.3}, {"start_layer": 2}):
        np.testing.assert_allclose(compute_rollout(probs, **kw).sum(-1), 1.0, atol=1e-12)


def test_rollout_reads_a_trace():
    model = build_tiny("encoder")
    inputs, tokens = make_inputs(model)
    trace = capture(model, inputs, tokens)
    out = compute_rollout(trace)
    np.testing.assert_array_equal(out, compute_rollout(trace.all_probs()))
    assert out.shape == (6, 6) and not np.allclose(out, np.eye(6))


@pytest.mark.parametrize("kwargs, message", [
    ({"fusion": "median"}, "head fusion"),
    ({"residual": 1.5}, "residual"),
    ({"start_layer": 2}, "start layer"),
    ({"discard": 1.0}, "discard"),
])
def test_bad_options_are_clear_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        compute_rollout(PROBS, **kwargs)


def test_float16_trace_gives_the_float32_rollout():
    model = build_tiny("decoder")
    inputs, tokens = make_inputs(model)
    full = compute_rollout(capture(model, inputs, tokens, precision="float32"))
    half = capture(model, inputs, tokens, precision="float16")
    assert half["L0.probs"].dtype == np.float16
    np.testing.assert_allclose(compute_rollout(half), full, atol=2e-3)
    assert np.all(np.triu(full, 1) == 0)  # causal: no token draws on later ones, through any layer


def test_deferred_rollout_of_a_float16_trace_is_the_rollout_it_replaces():
    from attnviz.analysis.rollout import DeferredRollout

    model = build_tiny("encoder")
    inputs, tokens = make_inputs(model)
    half = capture(model, inputs, tokens, precision="float16")
    pending = DeferredRollout(half)
    assert pending.shape == (6, 6)
    expected = compute_rollout(half.all_probs()).astype(np.float32)  # what run_trace stored before
    np.testing.assert_array_equal(pending.row(2), expected[2])
    np.testing.assert_array_equal(pending.full(), expected)
    assert pending.full() is pending.full()  # computed once
