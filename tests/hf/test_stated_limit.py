"""DeBERTa-v2's stated limit at every door: its disentangled terms cannot be recomputed from q and k, so it keeps
full maps up to MAX_FULL_T tokens and beyond says so in one line — the CLI on stderr with exit code 2, Python as an
``AttnvizError``. (The app's visible notice: tests/gui/test_stated_limit_notice.py.) The limit is lowered for the
test; the same input within it is captured, and a family on demand is not refused (controls)."""

from __future__ import annotations

import pytest

from attnviz.cli import main

from .factories import TEXT, make_model


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("stated_limit")
    return {name: make_model(name, root / name, max_pos=64) for name in ("deberta-v2", "mpt")}


def _tokens(folder) -> int:
    import attnviz

    return len(attnviz.load(str(folder)).trace(TEXT).tokens)


def test_cli_refuses_in_one_line_with_exit_2(folders, monkeypatch, tmp_path, capsys):
    import attnviz.hf.capture as cap

    n = _tokens(folders["deberta-v2"])
    monkeypatch.setattr(cap, "MAX_FULL_T", n - 1)
    out = tmp_path / "d.npz"
    assert main(["trace", "--model", str(folders["deberta-v2"]), "--text", TEXT, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("attnviz: error:"), err
    assert f"up to {n - 1:,} tokens (this input has {n:,})" in err[0] and "Traceback" not in err[0]
    assert not out.exists()
    monkeypatch.setattr(cap, "MAX_FULL_T", n)  # control: within the stated length it is written
    assert main(["trace", "--model", str(folders["deberta-v2"]), "--text", TEXT, "-o", str(out)]) == 0
    assert out.exists()


def test_python_raises_an_attnviz_error(folders, monkeypatch):
    import attnviz
    import attnviz.hf.capture as cap
    from attnviz.errors import AttnvizError

    model = attnviz.load(str(folders["deberta-v2"]))
    n = len(model.trace(TEXT).tokens)  # within the limit: full maps
    monkeypatch.setattr(cap, "MAX_FULL_T", n - 1)
    with pytest.raises(AttnvizError, match=r"computes attention in its own code \(terms attnviz cannot recompute"):
        model.trace(TEXT)
    # control: MPT at the same lowered limit goes on demand instead of being refused
    monkeypatch.setattr(cap, "MAX_FULL_T", 1)
    monkeypatch.setattr(cap, "ON_DEMAND_T", 1)
    trace = attnviz.load(str(folders["mpt"])).trace(TEXT, grad=False)  # gradients need the eager maps
    assert len(trace.tokens) > 1 and "L0.probs" in trace.trace.deferred and "L0.lse" in trace
