"""`attnviz export` from the command line: files decode, bad arguments give one line and exit 2."""

import xml.etree.ElementTree as ET

import pytest
import torch
from PIL import Image

from attnviz.cli import main
from attnviz.models import ModelConfig, build_model
from attnviz.models.checkpoint import save_checkpoint
from attnviz.text import Tokenizer

TEXT = "the animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    torch.manual_seed(0)
    tok = Tokenizer.build("word", [TEXT], prefix=["[CLS]"])
    cfg = ModelConfig(kind="encoder", vocab_size=len(tok.vocab), n_layers=2, n_heads=2, d_model=16, max_len=32)
    return save_checkpoint(tmp_path_factory.mktemp("m") / "tiny", build_model(cfg), cfg, {"labels": ["a", "b"]},
                           tokenizer=tok)


def _export(model_dir, *extra):
    return main(["export", "--model", str(model_dir), "--text", TEXT, *extra])


def test_head_map_png_svg_pdf(model_dir, tmp_path):
    for suffix in ("png", "svg", "pdf"):
        out = tmp_path / f"hm.{suffix}"
        assert _export(model_dir, "--view", "head-map", "--layer", "1", "--head", "1", "--size", "800x600",
                       "-o", str(out)) == 0
    with Image.open(tmp_path / "hm.png") as im:
        assert im.size == (800, 600)
    svg_text = " ".join("".join(e.itertext()) for e in ET.parse(tmp_path / "hm.svg").getroot().iter()
                        if e.tag.endswith("text"))
    assert "animal" in svg_text and "street" in svg_text
    assert (tmp_path / "hm.pdf").read_bytes().startswith(b"%PDF")


def test_all_heads_writes_one_file_per_head(model_dir, tmp_path):
    assert _export(model_dir, "--view", "head-map", "--layer", "0", "--all-heads", "--size", "400x300",
                   "-o", str(tmp_path / "h.png")) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h_L0_H0.png", "h_L0_H1.png"]


def test_data_csv_holds_the_probabilities(model_dir, tmp_path):
    from attnviz.runtime import load_model, run_trace

    assert _export(model_dir, "--view", "head-map", "--layer", "1", "--head", "0", "--size", "400x300",
                   "-o", str(tmp_path / "h.png"), "--data", str(tmp_path / "h.csv")) == 0
    rows = (tmp_path / "h.csv").read_text().splitlines()
    trace = run_trace(load_model(model_dir), text=TEXT)
    assert rows[0].split(",")[1:] == trace.tokens
    first = [float(x) for x in rows[1].split(",")[1:]]
    assert first == pytest.approx(trace["L1.probs"][0, 0].tolist(), abs=1e-7)


@pytest.mark.parametrize("extra, fragment", [
    (["--view", "nope", "-o", "x.png"], "invalid choice"),
    (["--view", "head-map", "-o", "x.gif"], ".png, .svg or .pdf"),
    (["--view", "head-map", "-o", "/nonexistent-dir/x.png"], "does not exist"),
    (["--view", "head-map", "--head", "7", "-o", "x.png"], "head 7 does not exist"),
    (["--view", "head-map", "--part", "cross", "-o", "x.png"], "no cross-attention"),
    (["--view", "filters-pca", "-o", "x.png"], "does not apply"),
    (["-o", "x.png"], "either --view"),
])
def test_bad_arguments_exit_2_with_one_line(model_dir, tmp_path, capsys, monkeypatch, extra, fragment):
    monkeypatch.chdir(tmp_path)
    try:
        code = _export(model_dir, *extra)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and fragment in err[0]
    assert not list(tmp_path.glob("x.*"))
