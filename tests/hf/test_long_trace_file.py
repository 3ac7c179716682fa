"""``attnviz trace --text-file`` on a long input of a tiny Llama: the file holds no (T, T) array (no default
rollout, no map: probabilities from q, k and lse; q/k before rotation, v and the mid-block stream as rules), is
recognised as attnviz's own by its content marker, and reads back with every entry. A short input (the control)
still saves its maps and its rollout."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from attnviz.capture import Trace
from attnviz.cli import main
from attnviz.io.trace_marker import has_trace_marker

from .factories import TEXT, make_model

LONG_T = 700  # above LARGE_T (512): an on-demand trace gets no default rollout


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return make_model("llama", tmp_path_factory.mktemp("long") / "llama", layers=2, max_pos=1024)


def _members(path) -> dict:
    """member name → shape, read from each .npy header (nothing loaded)."""
    shapes = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            with zf.open(name) as fh:
                major, _ = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                shapes[name[:-4] if name.endswith(".npy") else name] = read(fh)[0]
    return shapes


def _trace(llama, tmp_path, text: str):
    src, out = tmp_path / "doc.txt", tmp_path / "t.npz"
    src.write_text(text)
    code = main(["trace", "--model", str(llama), "--text-file", str(src), "-o", str(out)])
    return code, out


def test_a_long_trace_file_holds_no_square_array_and_reads_back(llama, tmp_path, capsys):
    code, out = _trace(llama, tmp_path, " ".join([TEXT] * 60))
    assert code == 0, capsys.readouterr().err
    assert has_trace_marker(out)
    back = Trace.load(out)
    T = len(back.tokens)
    assert T > LONG_T
    shapes = _members(out)
    square = [n for n, s in shapes.items() if sum(d >= T for d in s) >= 2]
    assert square == [] and "rollout" not in shapes
    assert "L1.v" not in shapes and "L1.x" not in shapes and "L0.x" in shapes and "L0.resid" in shapes
    assert {"L1.v", "L1.q_pre_rope", "L1.k_pre_rope", "L1.h", "L1.x"} <= set(back.meta["recomputed"])
    assert back.shape("L1.v") == (2, T, 8) and back["L1.v"].shape == (2, T, 8)  # v from the recomputed x
    assert back.shape("L1.x") == shapes["L0.x"] and back["L1.x"].shape == shapes["L0.x"]
    probs = back.probs(1, rows=[T - 1])
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=0, atol=1e-5)
    back.close()


def test_a_short_trace_file_keeps_its_maps_and_rollout(llama, tmp_path, capsys):
    code, out = _trace(llama, tmp_path, TEXT)
    assert code == 0, capsys.readouterr().err
    shapes = _members(out)
    T = len(Trace.load(out).tokens)
    assert shapes["rollout"] == (T, T) and shapes["L1.probs"][-2:] == (T, T)
    assert "L1.v" in shapes
