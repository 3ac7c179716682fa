"""`attnviz export --color-scale`: the colour bar of the exported figure states and uses the chosen scale."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

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


def svg_texts(path) -> list[str]:
    return [" ".join("".join(e.itertext()).split()) for e in ET.parse(path).getroot().iter() if e.tag.endswith("text")]


@pytest.mark.parametrize("mode, words", [("auto", "fixed scale 0–1"), ("fixed", "fixed scale 0–1"),
                                         ("per-map", "this head's maximum"),
                                         ("shared", "one scale for all layers and heads")])
def test_colour_bar_states_and_uses_the_scale(model_dir, tmp_path, mode, words):
    from attnviz.gui.widgets.colour_bar import format_level
    from attnviz.runtime import load_model, run_trace

    out = tmp_path / "hm.svg"
    assert main(["export", "--model", str(model_dir), "--text", TEXT, "--view", "head-map", "--layer", "1",
                 "--head", "1", "--size", "900x700", "--color-scale", mode, "-o", str(out)]) == 0
    texts = svg_texts(out)
    assert any(words in t for t in texts), texts
    trace = run_trace(load_model(model_dir), text=TEXT)
    top = {"auto": 1.0, "fixed": 1.0, "per-map": float(trace["L1.probs"][1].max()),
           "shared": max(float(np.max(trace[f"L{i}.probs"])) for i in range(2))}[mode]
    assert mode in ("auto", "fixed") or top < 0.99  # the modes differ for this model
    assert format_level(top) in texts  # the bar's top label is the value the brightest colour stands for


def test_unknown_colour_scale_exits_2(model_dir, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export", "--model", str(model_dir), "--text", TEXT, "--view", "head-map", "--color-scale", "loud",
              "-o", str(tmp_path / "x.png")])
    assert exc.value.code == 2
