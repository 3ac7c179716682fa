"""Cosine similarity of positional embeddings, flat and laid out on the patch grid."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis import patch_position_similarity, positional_similarity
from attnviz.errors import InputError


def _cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_positional_similarity_is_cosine():
    rng = np.random.default_rng(0)
    pos = rng.normal(size=(7, 5))
    sim = positional_similarity(pos)
    for i in range(7):
        for j in range(7):
            assert sim[i, j] == pytest.approx(_cos(pos[i], pos[j]), abs=1e-12)


def test_zero_vectors_have_zero_similarity():
    pos = np.zeros((3, 4))
    pos[0, 0] = 2.0
    sim = positional_similarity(pos)
    assert sim[0, 0] == pytest.approx(1.0) and np.all(sim[1:] == 0) and np.all(sim[:, 1:] == 0)


@pytest.mark.parametrize("with_cls", [True, False])
def test_patch_maps_use_the_grid_and_skip_cls(with_cls):
    gh, gw = 2, 3
    rng = np.random.default_rng(1)
    pos = rng.normal(size=(gh * gw + with_cls, 4))
    maps = patch_position_similarity(pos, (gh, gw))
    assert maps.shape == (gh, gw, gh, gw)
    for r1 in range(gh):
        for c1 in range(gw):
            assert maps[r1, c1, r1, c1] == pytest.approx(1.0)
            for r2 in range(gh):
                for c2 in range(gw):
                    a, b = pos[with_cls + r1 * gw + c1], pos[with_cls + r2 * gw + c2]
                    assert maps[r1, c1, r2, c2] == pytest.approx(_cos(a, b), abs=1e-12)


def test_rows_that_do_not_fit_the_grid():
    with pytest.raises(InputError, match="patch grid"):
        patch_position_similarity(np.ones((5, 4)), (2, 3))
