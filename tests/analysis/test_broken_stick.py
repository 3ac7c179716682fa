"""The broken-stick shares the patch-filter PCA figure marks noise by, against the formula written out,
and a Monte-Carlo stick (the expected sorted shares of a randomly broken stick)."""

import numpy as np
import pytest

from attnviz.analysis.pca import broken_stick


def test_broken_stick_by_hand_and_by_simulation():
    p = 4
    want = [(1 + 1 / 2 + 1 / 3 + 1 / 4) / 4, (1 / 2 + 1 / 3 + 1 / 4) / 4, (1 / 3 + 1 / 4) / 4, (1 / 4) / 4]
    np.testing.assert_allclose(broken_stick(p, 4), want)
    assert broken_stick(p, 4).sum() == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.random((20000, p - 1)), axis=1)
    pieces = np.diff(np.concatenate([np.zeros((20000, 1)), cuts, np.ones((20000, 1))], axis=1), axis=1)
    np.testing.assert_allclose(np.sort(pieces, axis=1)[:, ::-1].mean(0), want, atol=5e-3)
    with pytest.raises(Exception):
        broken_stick(0, 1)
