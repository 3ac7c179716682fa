"""The toy sandbox: hand-worked numbers of seed 003, an independent numpy recomputation, parse errors per cell."""

import math

import numpy as np
import pytest

from attnviz.analysis.sandbox import (
    PRESET_NAMES, SEED_003_X, SandboxConfig, check_shapes, compute_sandbox, format_matrix, make_preset,
    parse_matrix, parse_vector,
)


def _independent(X, WQ, WK, WV, scale, causal=False, bQ=0.0, bK=0.0, bV=0.0):
    """Textbook loops, one query and one key at a time (not the vectorised code under test)."""
    Q, K, V = X @ WQ + bQ, X @ WK + bK, X @ WV + bV
    T = X.shape[0]
    P = np.zeros((T, T))
    for i in range(T):
        keys = range(i + 1) if causal else range(T)
        e = {j: math.exp(float(Q[i] @ K[j]) * scale) for j in keys}
        total = sum(e.values())
        for j, v in e.items():
            P[i, j] = v / total
    return Q @ K.T, P, P @ V


def test_seed_003_preset_matches_hand_worked_numbers():
    p = make_preset("seed 003 inputs")
    np.testing.assert_array_equal(p.X, [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]])
    r = compute_sandbox(p.X, p.W_Q, p.W_K, p.W_V, p.config)
    # identity weights: Q = K = V = X, scores are the dot products x_i · x_j, worked by hand
    np.testing.assert_array_equal(r.scores, [[2, 0, 2], [0, 8, 4], [2, 4, 4]])
    assert r.scale == 0.5  # 1/√d_k with d_k = 4
    np.testing.assert_array_equal(r.scaled, [[1, 0, 1], [0, 4, 2], [1, 2, 2]])
    e = math.e
    # row 1: softmax(1, 0, 1) = (e, 1, e) / (2e + 1)
    np.testing.assert_allclose(r.P[0], [e / (2 * e + 1), 1 / (2 * e + 1), e / (2 * e + 1)], rtol=1e-12)
    # row 2: softmax(0, 4, 2) = (1, e⁴, e²) / (1 + e⁴ + e²)
    d = 1 + e**4 + e**2
    np.testing.assert_allclose(r.P[1], [1 / d, e**4 / d, e**2 / d], rtol=1e-12)
    # z_1 = 0.4223·[1,0,1,0] + 0.1554·[0,2,0,2] + 0.4223·[1,1,1,1]
    a, b = e / (2 * e + 1), 1 / (2 * e + 1)
    np.testing.assert_allclose(r.Z[0], [2 * a, 2 * b + a, 2 * a, 2 * b + a], rtol=1e-12)
    assert round(r.Z[0][0], 4) == 0.8446 and round(r.Z[0][1], 4) == 0.7330


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_random_preset_against_independent_loops(causal, bias):
    p = make_preset("random", seed=7)
    cfg = SandboxConfig(causal=causal, bias=bias)
    r = compute_sandbox(p.X, p.W_Q, p.W_K, p.W_V, cfg, p.b_Q, p.b_K, p.b_V)
    b = (p.b_Q, p.b_K, p.b_V) if bias else (0.0, 0.0, 0.0)
    scores, P, Z = _independent(p.X, p.W_Q, p.W_K, p.W_V, 1 / math.sqrt(3), causal, *b)
    np.testing.assert_allclose(r.scores, scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.P, P, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r.Z, Z, rtol=1e-12, atol=1e-12)
    if causal:
        assert np.isneginf(r.masked[0, 1]) and r.P[0, 1] == 0.0 and r.P[0, 0] == 1.0
    s = r.steps(2)  # one query's six steps agree with the matrices
    np.testing.assert_allclose(s.weighted.sum(0), r.Z[2], rtol=1e-12)
    np.testing.assert_allclose(s.scores, s.k @ s.q_i, rtol=1e-12)


def test_parameter_free_is_softmax_xxt_x():
    X = SEED_003_X
    r = compute_sandbox(X, config=SandboxConfig(mode="parameter-free", scale="none"))
    G = X @ X.T
    P = np.exp(G) / np.exp(G).sum(1, keepdims=True)
    np.testing.assert_allclose(r.Z, P @ X, rtol=1e-12)
    assert r.W_Q is None and r.scale == 1.0


def test_scale_options_and_saturation():
    p = make_preset("seed 003 inputs")
    sharp = compute_sandbox(p.X, p.W_Q, p.W_K, p.W_V, SandboxConfig(scale="none"))
    soft = compute_sandbox(p.X, p.W_Q, p.W_K, p.W_V, SandboxConfig(scale=0.1))
    np.testing.assert_array_equal(sharp.scaled, sharp.scores)
    assert sharp.P[1].max() > 0.98  # e⁸ dwarfs e⁴ and e⁰: softmax saturates without 1/√d_k
    assert soft.P[1].max() < 0.5


def test_presets_all_compute():
    for name in PRESET_NAMES:
        p = make_preset(name, seed=3)
        r = compute_sandbox(p.X, p.W_Q, p.W_K, p.W_V, p.config, p.b_Q, p.b_K, p.b_V)
        np.testing.assert_allclose(r.P.sum(1), 1.0)
    ident = make_preset("identity weights", X=np.ones((2, 5)))
    assert ident.W_Q.shape == (5, 5) and ident.X.shape == (2, 5)


@pytest.mark.parametrize("text", ["1 0 1 0\n0 2 0 2", "1, 0, 1, 0; 0, 2, 0, 2", "[[1, 0, 1, 0], [0, 2, 0, 2]]",
                                  "[1, 0, 1, 0]\n[0, 2, 0, 2]\n\n", "1 0 1 0\n0 2 0 2.0", "1 −0 1 0\n0 4/2 0 2"])
def test_parse_accepts_common_notations(text):
    parsed = parse_matrix(text)
    assert parsed.ok, parsed.errors
    np.testing.assert_array_equal(parsed.values, [[1, 0, 1, 0], [0, 2, 0, 2]])


def test_format_round_trips():
    a = np.array([[1.0, -0.25, 3.0], [2.5, 0.0, 1e-3]])
    np.testing.assert_array_equal(parse_matrix(format_matrix(a)).values, a)


def test_non_numeric_cell_is_located():
    text = "1 0 1\n0 abc 2"
    parsed = parse_matrix(text, "W_Q")
    assert not parsed.ok and parsed.values is None
    (err,) = parsed.errors
    assert (err.matrix, err.row, err.col) == ("W_Q", 1, 1)
    assert text[err.span[0]:err.span[1]] == "abc"
    assert "row 2, column 2" in err.message and "'abc' is not a number" in err.message


def test_nan_and_inf_are_rejected_per_cell():
    parsed = parse_matrix("1 nan\ninf 2\n3 -1e999")
    cells = {(e.row, e.col): e.message for e in parsed.errors}
    assert set(cells) == {(0, 1), (1, 0), (2, 1)}
    assert "NaN" in cells[(0, 1)] and "infinite" in cells[(1, 0)] and "infinite" in cells[(2, 1)]


def test_ragged_rows_mark_the_extra_cells_or_the_short_row():
    text = "1 2 3\n4 5 6 7\n8 9"
    parsed = parse_matrix(text)
    long = [e for e in parsed.errors if e.row == 1]
    short = [e for e in parsed.errors if e.row == 2]
    assert [(e.col, text[e.span[0]:e.span[1]]) for e in long] == [(3, "7")]
    assert short[0].col is None and "has 2 numbers but row 1 has 3" in short[0].message


def test_empty_and_oversized():
    assert "empty" in parse_matrix("  \n ").errors[0].message
    big = "\n".join(" ".join(["1"] * 40) for _ in range(2))
    assert "at most 32×32" in parse_matrix(big).errors[0].message


def test_vector_must_be_one_row():
    assert parse_vector("1 2 3").values.shape == (3,)
    assert "one row" in parse_vector("1 2\n3 4", "b_K").errors[0].message


def test_shape_mismatches_are_named():
    X, W = np.ones((3, 4)), np.ones((4, 2))
    assert check_shapes(X, W, W, W) == []
    errs = check_shapes(X, np.ones((3, 2)), np.ones((4, 3)), W, b_V=np.ones(5))
    msgs = {e.matrix: e.message for e in errs}
    assert "W_Q has 3 rows but X has 4 columns" in msgs["W_Q"]
    assert "same length d_k" in msgs["W_K"]
    assert "b_V has 5 numbers" in msgs["b_V"]
    with pytest.raises(ValueError, match="W_Q has 3 rows"):
        compute_sandbox(X, np.ones((3, 2)), W, W)
