"""--data of the figures that draw more than one head's attention: matrix-z saves A, V and Z (Z = A·V,
recomputed), scale-reason its curves, the two training studies their runs."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.cli import main

TIRED = "The animal didn't cross the street because it was too tired"


def test_matrix_z_data_is_a_v_z(tmp_path):
    out = tmp_path / "z.npz"
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", "matrix-z", "--layer", "1", "--head", "2",
                 "-o", str(tmp_path / "z.png"), "--data", str(out), "--device", "cpu"]) == 0
    d = np.load(out)
    np.testing.assert_allclose(d["Z"], d["A"] @ d["V"], atol=1e-5)  # independent recomputation of Z = A V
    assert d["A"].shape == (12, 12) and np.allclose(d["A"].sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("view,key", [("scale-reason", "curves"), ("scale-training", "loss"), ("path-length", "by_distance")])
def test_study_figures_save_their_numbers(tmp_path, view, key):
    out = tmp_path / "d.npz"
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", view, "-o", str(tmp_path / "f.png"),
                 "--data", str(out), "--device", "cpu"]) == 0
    d = np.load(out)
    assert key in d and np.isfinite(d[key]).all()
    if view == "scale-reason":  # std of q·k grows like √d_k unscaled (the first column, d_k rising)
        assert d["curves"][-1, 0] > 4 * d["curves"][2, 0]
