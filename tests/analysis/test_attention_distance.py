"""Mean attention distance and attention entropy against loops and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.analysis import attention_entropy, mean_attention_distance
from attnviz.capture import capture

from tests.models.tiny import build_tiny, make_inputs


def test_uniform_text_attention_has_the_closed_form_distance():
    T = 7
    probs = [np.full((2, T, T), 1 / T)]
    # mean over i, j of |i - j| = (T² - 1) / (3T)
    np.testing.assert_allclose(mean_attention_distance(probs), (T * T - 1) / (3 * T), atol=1e-12)


def test_text_distance_matches_a_loop():
    rng = np.random.default_rng(0)
    probs = [rng.dirichlet(np.ones(5), size=(3, 5)) for _ in range(2)]
    out = mean_attention_distance(probs)
    for layer, p in enumerate(probs):
        for h in range(3):
            ref = np.mean([sum(p[h, i, j] * abs(i - j) for j in range(5)) for i in range(5)])
            assert out[layer, h] == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("skip_cls", [True, False])
def test_image_distance_in_pixels_matches_a_loop(skip_cls):
    gh, gw, patch = 2, 3, 4
    T = gh * gw + 1
    rng = np.random.default_rng(1)
    probs = [rng.dirichlet(np.ones(T), size=(2, T))]
    out = mean_attention_distance(probs, grid=(gh, gw), patch_size=patch, skip_cls=skip_cls)
    for h in range(2):
        per_query = []
        for qi in range(1, T):
            r1, c1 = divmod(qi - 1, gw)
            weights = probs[0][h, qi, 1:] / (probs[0][h, qi, 1:].sum() if skip_cls else 1.0)
            d = 0.0
            for kj in range(1, T):
                r2, c2 = divmod(kj - 1, gw)
                d += weights[kj - 1] * patch * math.hypot(r1 - r2, c1 - c2)
            per_query.append(d)
        assert out[0, h] == pytest.approx(np.mean(per_query), abs=1e-12)


def test_distance_reads_grid_and_patch_size_from_a_vit_trace():
    model = build_tiny("vit")  # 4×4 grid of 2-pixel patches
    inputs, tokens = make_inputs(model)
    trace = capture(model, inputs, tokens)
    out = mean_attention_distance(trace)
    assert out.shape == (2, 4)
    np.testing.assert_allclose(out, mean_attention_distance(trace.all_probs(), grid=(4, 4), patch_size=2))
    assert np.all(out > 0) and np.all(out < 2 * math.hypot(3, 3))


def test_entropy_closed_forms_and_masked_zeros():
    T = 4
    uniform = np.full((1, T, T), 1 / T)
    onehot = np.broadcast_to(np.eye(T), (1, T, T))
    causal = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # row i uniform over i+1 keys
    out = attention_entropy([np.concatenate([uniform, onehot, causal[None]])])
    np.testing.assert_allclose(out[0], [math.log(T), 0.0, np.mean(np.log(np.arange(1, T + 1)))], atol=1e-12)


def test_entropy_of_a_decoder_trace_is_finite_and_bounded():
    model = build_tiny("decoder")
    inputs, tokens = make_inputs(model)
    ent = attention_entropy(capture(model, inputs, tokens))
    assert ent.shape == (2, 4) and np.all(np.isfinite(ent))
    # causal row i can spread over at most i+1 keys
    assert np.all(ent >= 0) and np.all(ent <= np.mean(np.log(np.arange(1, 7))) + 1e-6)
