"""Self-attention without positions is permutation equivariant; with positions it is not."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnviz.analysis.permutation import permutation_matrix
from attnviz.errors import InputError
from attnviz.runtime.permutation import check_permutation

from tests.models.tiny import build_tiny

T = 6
IDS = torch.tensor([[7, 9, 11, 13, 15, 17]])  # distinct tokens
NOPOS = build_tiny("encoder", pos="none", pool="mean")
LEARNED = build_tiny("encoder", pos="learned", pool="mean")
PERMS = st.permutations(list(range(T)))


@settings(max_examples=20, deadline=None, database=None)
@given(perm=PERMS)
def test_without_positions_attention_is_equivariant(perm):
    result = check_permutation(NOPOS, IDS, perm)
    assert result["max_error_equivariant"] < 1e-5
    assert result["max_error_invariant"] < 1e-5  # mean pooling: the prediction does not move


@settings(max_examples=20, deadline=None, database=None)
@given(perm=PERMS)
def test_with_learned_positions_attention_is_not_equivariant(perm):
    assume(perm != list(range(T)))
    result = check_permutation(LEARNED, IDS, perm)
    assert result["max_error_equivariant"] > 1e-2


def test_expected_maps_are_rows_and_columns_permuted():
    perm = [2, 0, 1, 5, 3, 4]
    result = check_permutation(NOPOS, IDS, perm)
    for orig, expected in zip(result["probs_orig"], result["probs_expected"]):
        np.testing.assert_array_equal(expected, orig[:, perm][:, :, perm])
    R = permutation_matrix(perm)
    np.testing.assert_array_equal(R @ np.arange(T), perm)


def test_identity_permutation_has_zero_error_even_with_positions():
    result = check_permutation(LEARNED, IDS, list(range(T)))
    assert result["max_error_equivariant"] < 1e-6


@pytest.mark.parametrize("perm", [[0, 1, 2], [0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 5, 6]])
def test_bad_permutation_is_a_clear_error(perm):
    with pytest.raises(InputError, match="not a permutation"):
        check_permutation(NOPOS, IDS, perm)


def test_compare_permuted_on_hand_built_traces():
    """The comparison alone, on arrays whose answer is known: an equivariant pair and a broken one."""
    from attnviz.analysis.permutation import compare_permuted

    class Fake:
        def __init__(self, probs, pred):
            self._p, self._pred = probs, pred

        def all_probs(self):
            return self._p

        def __getitem__(self, key):
            assert key == "prediction"
            return self._pred

    rng = np.random.default_rng(0)
    a = rng.random((2, 4, 4))
    a /= a.sum(-1, keepdims=True)
    perm = [2, 0, 3, 1]
    R = permutation_matrix(perm)
    shuffled = np.einsum("ij,hjk,lk->hil", R, a, R)  # R A Rᵀ per head
    result = compare_permuted(Fake([a], np.array([0.3, 0.7])), Fake([shuffled], np.array([0.3, 0.7])), perm)
    assert result["max_error_equivariant"] < 1e-12 and result["max_error_invariant"] == 0.0
    broken = compare_permuted(Fake([a], np.array([0.3, 0.7])), Fake([a], np.array([0.4, 0.6])), perm)
    assert broken["max_error_equivariant"] == pytest.approx(np.abs(a - shuffled).max())
    assert broken["max_error_invariant"] == pytest.approx(0.1)
    with pytest.raises(InputError, match="not a permutation"):
        compare_permuted(Fake([a], None), Fake([a], None), [0, 0, 1, 2])
