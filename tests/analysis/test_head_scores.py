"""Head scores on hand-built attention patterns whose values are known exactly."""

import numpy as np
import pytest

from attnviz.analysis.head_scores import HeadScoreAccumulator, gradient_attribution, per_input_scores


def _previous_token(T):
    A = np.zeros((T, T))
    A[0, 0] = 1.0
    A[np.arange(1, T), np.arange(T - 1)] = 1.0
    return A


def _batch(*patterns):
    return np.stack([np.stack(patterns)])  # (1, H, T, T)


def test_pure_previous_token_head_scores_one_and_a_diagonal_head_zero():
    T = 7
    probs = _batch(_previous_token(T), np.eye(T))
    s = per_input_scores(probs, np.ones((1, T), bool))
    np.testing.assert_allclose(s["previous_token"][0], [1.0, 0.0])
    # distance: prev-token rows are 1 away except row 0 (distance 0): 6/7; the diagonal head 0
    np.testing.assert_allclose(s["distance"][0], [6 / 7, 0.0])
    np.testing.assert_allclose(s["entropy"][0], [0.0, 0.0], atol=1e-12)
    # first-token share over rows 1..6: only row 1 of the prev-token head looks at position 0
    np.testing.assert_allclose(s["first_token"][0], [1 / 6, 0.0])


def test_uniform_causal_head_entropy_and_sink_share():
    T = 5
    A = np.tril(np.ones((T, T)))
    A /= A.sum(1, keepdims=True)
    s = per_input_scores(A[None, None], np.ones((1, T), bool))
    want_entropy = np.mean([np.log(i + 1) for i in range(T)])
    np.testing.assert_allclose(s["entropy"][0, 0], want_entropy)
    np.testing.assert_allclose(s["first_token"][0, 0], np.mean([1 / (i + 1) for i in range(1, T)]))
    np.testing.assert_allclose(s["previous_token"][0, 0], np.mean([1 / (i + 1) for i in range(1, T)]))


def test_induction_and_duplicate_heads_on_a_repeated_sequence():
    # [BOS] a b c a b c : the second copy's queries 4, 5, 6 have previous occurrences 1, 2, 3
    ids = np.array([[0, 1, 2, 3, 1, 2, 3]])
    T = ids.shape[1]
    induction = np.zeros((T, T))
    duplicate = np.zeros((T, T))
    for i in range(T):
        induction[i, 0] = duplicate[i, 0] = 1.0  # rows without a target rest on BOS
    for i in (4, 5, 6):
        induction[i] = 0
        induction[i, i - 3 + 1] = 1.0  # the token after the previous occurrence
        duplicate[i] = 0
        duplicate[i, i - 3] = 1.0  # the previous occurrence itself
    s = per_input_scores(_batch(induction, duplicate), np.ones((1, T), bool), ids=ids)
    np.testing.assert_allclose(s["induction"][0], [1.0, 0.0])
    np.testing.assert_allclose(s["duplicate_token"][0], [0.0, 1.0])


def test_padding_rows_and_keys_are_left_out():
    T = 6
    real = 4
    A = _previous_token(T)
    A[real:] = 0.25  # garbage in padded rows must not count
    valid = np.zeros((1, T), bool)
    valid[0, :real] = True
    s = per_input_scores(A[None, None], valid)
    assert s["previous_token"][0, 0] == pytest.approx(1.0)
    assert s["distance"][0, 0] == pytest.approx(3 / 4)


def test_scores_needing_a_row_are_nan_when_no_row_qualifies():
    ids = np.array([[0, 1, 2]])  # no repeated token: no duplicate or induction row
    s = per_input_scores(_previous_token(3)[None, None], np.ones((1, 3), bool), ids=ids)
    assert np.isnan(s["induction"][0, 0]) and np.isnan(s["duplicate_token"][0, 0])


def test_cross_attention_gets_only_the_scores_that_make_sense():
    probs = np.full((2, 3, 4, 5), 0.2)
    s = per_input_scores(probs, np.ones((2, 4), bool), k_valid=np.ones((2, 5), bool))
    assert set(s) == {"first_token", "entropy"}
    np.testing.assert_allclose(s["entropy"], np.log(5))


def test_image_distance_leaves_out_cls_and_renormalises():
    # CLS + 2x2 grid; every patch query puts half its weight on CLS, half on the patch to its right/left
    T = 5
    A = np.zeros((T, T))
    A[0, 0] = 1
    for q, k in ((1, 2), (2, 1), (3, 4), (4, 3)):
        A[q, 0] = 0.5
        A[q, k] = 0.5
    from attnviz.analysis.distance import position_distances

    d, off = position_distances(T, grid=(2, 2), patch_size=4)
    D = np.zeros((T, T))
    D[off:, off:] = d
    spatial = np.array([False, True, True, True, True])
    s = per_input_scores(A[None, None], np.ones((1, T), bool), distances=D, spatial=spatial)
    assert s["distance"][0, 0] == pytest.approx(4.0)  # one patch (4 pixels) away after renormalising


def test_gradient_attribution_is_abs_grad_times_attention():
    rng = np.random.default_rng(0)
    p, g = rng.random((2, 3, 4, 4)), rng.normal(size=(2, 3, 4, 4))
    want = np.array([[np.abs(g[b, h] * p[b, h]).sum() for h in range(3)] for b in range(2)])
    np.testing.assert_allclose(gradient_attribution(p, g), want)


def test_accumulator_means_top_inputs_and_pattern_match_a_direct_computation():
    rng = np.random.default_rng(1)
    L, H, T = 2, 3, 5
    acc = HeadScoreAccumulator({"self": (L, H)}, top_k=2)
    all_vals = []
    all_probs = []
    for b0 in range(0, 10, 4):
        B = min(4, 10 - b0)
        vals = rng.random((B, H))
        vals[0, 1] = np.nan  # undefined for this input and head
        all_vals.append(vals)
        probs = rng.random((B, H, T, T))
        all_probs.append(probs)
        for layer in range(L):
            acc.add_scores("self", layer, "previous_token", vals, b0)
            acc.add_pattern("self", layer, probs, np.ones((B, T), bool))
        acc.add_inputs(b0, [f"text {b0 + i}" for i in range(B)])
    res = acc.result()
    vals = np.concatenate(all_vals)
    np.testing.assert_allclose(res.scores["self"]["previous_token"][1], np.nanmean(vals, 0))
    np.testing.assert_array_equal(res.counts["self"]["previous_token"][0], np.isfinite(vals).sum(0))
    best = np.argsort(-np.nan_to_num(vals, nan=-1), axis=0, kind="stable")[:2].T  # (H, 2)
    np.testing.assert_array_equal(res.top["self"]["previous_token"][0], best)
    np.testing.assert_allclose(res.patterns["self"][0], np.concatenate(all_probs).mean(0))
    assert set(res.inputs) == set(best.ravel().tolist())  # only the inputs a top list needs are kept
    assert res.n_inputs == 10
    doc = res.to_json()
    assert doc["n_inputs"] == 10 and len(doc["heads"]) == L * H
    assert doc["heads"][1]["scores"]["previous_token"] == pytest.approx(np.nanmean(vals, 0)[1], abs=1e-6)


def test_pattern_mean_counts_only_inputs_that_reach_a_cell():
    acc = HeadScoreAccumulator({"self": (1, 1)})
    short = np.zeros((1, 1, 3, 3))
    short[0, 0, :2, :2] = 0.5
    long = np.full((1, 1, 3, 3), 1 / 3)
    acc.add_pattern("self", 0, short, np.array([[True, True, False]]))
    acc.add_pattern("self", 0, long, np.ones((1, 3), bool))
    pat = acc.result().patterns["self"][0, 0]
    assert pat[0, 0] == pytest.approx((0.5 + 1 / 3) / 2)
    assert pat[2, 2] == pytest.approx(1 / 3)  # only the long input has row 2
