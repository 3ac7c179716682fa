"""``attnviz trace --layers 0,3``: only the asked-for layers of a Hugging Face model kept in full."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.capture import Trace
from attnviz.cli import main

from .factories import make_model


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    return make_model("llama", tmp_path_factory.mktemp("layers") / "llama", layers=4)


def _trace(qwen, tmp_path, *extra):
    out = tmp_path / "t.npz"
    code = main(["trace", "--model", str(qwen), "--text", "the cat sat on the mat", "-o", str(out), *extra])
    return code, (Trace.load(out) if out.exists() else None)


def test_only_the_asked_for_layers_are_kept_in_full(qwen, tmp_path, capsys):
    code, part = _trace(qwen, tmp_path, "--layers", "0,3")
    assert code == 0 and part.n_layers == 4
    for i in range(4):
        assert f"L{i}.probs" in part
        assert (f"L{i}.q" in part) == (i in (0, 3)) and (f"L{i}.z" in part) == (i in (0, 3))
    assert "layers 1–2" in part.meta["notice"] and "probabilities only" in part.meta["notice"]
    full_code, full = _trace(qwen, tmp_path)
    assert full_code == 0 and all(f"L{i}.q" in full for i in range(4))
    for i in range(4):  # the same forward: the probabilities agree whether a layer is kept in full or not
        np.testing.assert_allclose(part[f"L{i}.probs"], full[f"L{i}.probs"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(part["L3.q"], full["L3.q"])


@pytest.mark.parametrize("arg, says", [("0,9", "has layers 0–3: no layer 9"), ("x", "expected layer numbers")])
def test_bad_layers_are_refused_in_one_line_with_exit_2(qwen, tmp_path, capsys, arg, says):
    with pytest.raises(SystemExit) if arg == "x" else _no_raise() as caught:
        code, trace = _trace(qwen, tmp_path, "--layers", arg)
    code = caught.value.code if arg == "x" else code
    err = [line for line in capsys.readouterr().err.splitlines() if says in line]
    assert code == 2 and len(err) == 1 and not (tmp_path / "t.npz").exists()


def test_a_native_model_says_it_is_traced_in_full(tmp_path, capsys):
    code = main(["trace", "--model", "coref", "--text", "the cat sat", "--layers", "0", "-o", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err
    assert code == 2 and "is traced in full" in err and not (tmp_path / "t.npz").exists()


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
