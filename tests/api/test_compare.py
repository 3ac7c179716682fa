"""attnviz.compare and export --view compare: one head of two traces, one colour scale, their difference."""

from __future__ import annotations

import numpy as np
import pytest

import attnviz
from attnviz.cli import main
from attnviz.errors import AttnvizError, InputError

TIRED = "The animal didn't cross the street because it was too tired"
WIDE = "The animal didn't cross the street because it was too wide"


@pytest.fixture(scope="module")
def pair():
    model = attnviz.load("coref")
    return model.trace(TIRED), model.trace(WIDE)


def test_the_view_draws_both_maps_on_one_scale_and_their_difference(qapp, pair):
    from attnviz.analysis.trace_compare import pair_traces
    from attnviz.figures.registry import make_figure
    from attnviz.selection import SelectionState

    a, b = pair
    view, _sel = make_figure("compare", pair_traces(a.trace, b.trace), SelectionState(layer=1, head=0))
    try:
        first, second, diff = view.values
        np.testing.assert_array_equal(first, a.probs(1)[0])  # straight from each trace
        np.testing.assert_array_equal(second, b.probs(1)[0])
        np.testing.assert_allclose(diff, b.probs(1)[0] - a.probs(1)[0], atol=0)  # independent: numpy's subtraction
        tops = [m.bar.levels for m in view.maps]
        top = float(max(first.max(), second.max()))
        span = float(np.abs(diff).max())
        assert tops[0] == tops[1] == (0.0, pytest.approx(top)) and tops[2] == (pytest.approx(-span), pytest.approx(span))
        assert "it" in view.cell_text(2, 8, 2) and view.cell_text(2, 8, 2).endswith(f"{diff[8, 2]:.6f}")
        assert abs(diff[8, 2]) > 0.5  # "it": 'animal' when tired, 'street' when wide (the model's own result)
    finally:  # as export_one: closed and deleted while the application lives
        view.close()
        view.deleteLater()
        qapp.processEvents()


def test_the_notebook_figure_is_the_cli_file(pair, tmp_path):
    a, b = pair
    png = attnviz.compare(a, b, layer=1, head=0, size=(800, 450)).to_bytes("png")
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", "compare", "--compare-text", WIDE,
                 "--layer", "1", "--head", "0", "--size", "800x450", "-o", str(tmp_path / "cmp.png")]) == 0
    assert (tmp_path / "cmp.png").read_bytes() == png
    swapped = attnviz.compare(b, a, layer=1, head=0, size=(800, 450)).to_bytes("png")
    assert swapped != png  # negative control: the order (and the sign of the difference) shows


def test_uncomparable_pairs_are_refused_in_one_line(pair, capsys):
    a, _ = pair
    short = attnviz.load("coref").trace("the animal was tired")
    with pytest.raises(InputError, match="compare needs the same heads and token count"):
        attnviz.compare(a, short)
    with pytest.raises(AttnvizError, match="the second is a str"):
        attnviz.compare(a, "text")
    with pytest.raises(AttnvizError, match="'compare' view draws two traces"):
        a.figure("compare")
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", "compare", "-o", "x.png"]) == 2
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", "compare", "--compare-text", "too short",
                 "-o", "x.png"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--view compare needs --compare MODEL" in err[0] and "cannot compare" in err[1]
