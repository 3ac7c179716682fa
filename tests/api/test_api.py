"""The Python API: load (bundled, native folder, HF folder), trace, arrays by name, figures equal to `export`."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

import attnviz
from attnviz.cli import main
from attnviz.errors import AttnvizError
from attnviz.models import ModelConfig, build_model
from attnviz.models.checkpoint import save_checkpoint
from attnviz.text import Tokenizer

TEXT = "the animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    torch.manual_seed(0)
    tok = Tokenizer.build("word", [TEXT], prefix=["[CLS]"])
    cfg = ModelConfig(kind="encoder", vocab_size=len(tok.vocab), n_layers=2, n_heads=3, d_model=24, max_len=32)
    return save_checkpoint(tmp_path_factory.mktemp("m") / "tiny", build_model(cfg), cfg, {"labels": ["a", "b"]},
                           tokenizer=tok)


@pytest.fixture(scope="module")
def traced(model_dir):
    return attnviz.load(model_dir, device="cpu").trace(TEXT)


def _softmax_from_qk(t, layer: int) -> np.ndarray:
    """Independent recomputation of one layer's weights from the trace's q, k, scale and mask (numpy)."""
    q, k = t[f"L{layer}.q"].astype(np.float64), t[f"L{layer}.k"].astype(np.float64)  # (H, T, dh)
    logits = q @ k.transpose(0, 2, 1) * float(t.meta["scale"]) + t[f"L{layer}.mask"].astype(np.float64)
    logits -= logits.max(axis=-1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=-1, keepdims=True)


def test_import_attnviz_stays_light():
    code = ("import sys, attnviz; attnviz.load; attnviz.Figure; attnviz.errors.AttnvizError; "
            "print(sorted(m for m in ('torch', 'PySide6', 'pyqtgraph', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    with pytest.raises(AttributeError):
        attnviz.no_such_name  # noqa: B018 (the lazy lookup still refuses unknown names)


def test_arrays_by_name_are_the_models_numbers(traced):
    assert traced.tokens[0] == "[CLS]" and len(traced.tokens) == 12
    assert "L1.probs" in traced.names and "L1.probs" in traced.arrays and "nope" not in traced.arrays
    for layer in (0, 1):
        probs = traced.arrays[f"L{layer}.probs"]
        assert isinstance(probs, np.ndarray) and probs.shape == (3, 12, 12)
        np.testing.assert_allclose(probs, _softmax_from_qk(traced, layer), atol=1e-5)
        np.testing.assert_array_equal(traced.probs(layer), probs)
    # negative control: the recomputation tells layers apart
    assert not np.allclose(traced["L0.probs"], _softmax_from_qk(traced, 1), atol=1e-3)
    assert traced["rollout"].shape == (12, 12)  # a deferred array, computed when read
    assert dict(traced.arrays).keys() == set(traced.names)


def test_figure_png_is_the_exported_file(traced, model_dir, tmp_path):
    fig = traced.figure("head-map", layer=1, head=2, size=(800, 450))
    png, md = fig._repr_png_()
    assert png.startswith(b"\x89PNG") and md == {"width": 800}  # the asked size, drawn at twice the pixels
    assert fig._repr_svg_() is None  # one image type per figure
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1600, 900)  # IHDR: 2× pixels
    assert main(["export", "--model", str(model_dir), "--text", TEXT, "--view", "head-map", "--layer", "1",
                 "--head", "2", "--size", "800x450", "--scale", "2", "-o", str(tmp_path / "cli.png")]) == 0
    assert (tmp_path / "cli.png").read_bytes() == png
    other = traced.figure("head-map", layer=1, head=1, size=(800, 450))._repr_png_()[0]
    assert other != png  # negative control: another head is another file


def test_figure_svg_and_save_with_export_options(traced, tmp_path):
    fig = traced.figure("token-lines", layer=0, size=(640, 360), title="Where it looks", display="svg")
    svg = fig._repr_svg_()
    assert fig._repr_png_() is None  # one image type per figure
    texts = " ".join("".join(e.itertext()) for e in ET.fromstring(svg).iter() if e.tag.endswith("text"))
    assert "animal" in texts and "Where it looks" in texts
    pdf = fig.save(tmp_path / "lines.pdf", dpi=72)
    assert pdf.read_bytes().startswith(b"%PDF") and b"/MediaBox [0 0 640.000000 360.000000]" in pdf.read_bytes()  # 640 px at 72 dpi
    from PIL import Image

    with Image.open(fig.save(tmp_path / "lines.png", scale=2, transparent=True)) as im:
        assert im.size == (1280, 720) and im.mode == "RGBA"
    with pytest.raises(AttnvizError, match="use .png, .svg or .pdf"):
        fig.save(tmp_path / "lines.html")
    with pytest.raises(AttnvizError, match="unknown figure option"):
        fig.save(tmp_path / "x.png", sise=(1, 2))
    step = traced.figure("steps", layer=1, head=0, query=8, step=4, size=(640, 360))  # the walkthrough's softmax
    assert step.to_bytes("png") != traced.figure("steps", layer=1, head=0, query=8, step=5,
                                                 size=(640, 360)).to_bytes("png")
    with pytest.raises(AttnvizError, match="step applies to the 'steps' view"):
        traced.figure("head-map", step=4)


def test_a_part_the_model_lacks_is_one_line(traced, model_dir, tmp_path, capsys):
    with pytest.raises(AttnvizError) as err:
        traced.figure("head-map", part="cross")
    assert str(err.value) == "this model has no cross-attention (part 'cross' needs an encoder–decoder)"
    with pytest.raises(AttnvizError, match="does not apply to encoder models"):
        traced.figure("filters-pca")
    with pytest.raises(AttnvizError, match="layer 5 does not exist"):
        traced.html("model", layer=5)
    with pytest.raises(AttnvizError, match="no cross-attention"):
        traced.html("head-map", part="cross")
    code = main(["export", "--model", str(model_dir), "--text", TEXT, "--view", "head-map", "--part", "cross",
                 "-o", str(tmp_path / "x.html")])
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err_lines[-1] == ("attnviz: error: this model has no cross-attention "
                                           "(part 'cross' needs an encoder–decoder)")
    assert not (tmp_path / "x.html").exists()


def test_bundled_model_example_input_and_saved_trace(tmp_path):
    model = attnviz.load("coref", device="cpu")
    t = model.trace()  # the app's opening input
    assert "it" in t.tokens and t.meta["model_name"] == "coref"
    t.save(tmp_path / "t.npz")
    back = attnviz.open_trace(tmp_path / "t.npz")
    np.testing.assert_array_equal(back["L0.probs"], t["L0.probs"])
    assert back.figure("model", size=(400, 300))._repr_png_()[0].startswith(b"\x89PNG")


def test_hugging_face_folder(tmp_path):
    from tests.hf.factories import make_model

    folder = make_model("bert", tmp_path / "bert")
    t = attnviz.load(folder, device="cpu").trace("the cat sat on the mat")
    assert t["L0.probs"].shape[0] == t.trace.n_heads
    np.testing.assert_allclose(t["L0.probs"].sum(-1), 1.0, atol=1e-5)
    page = t.html("head-map")
    assert "<iframe srcdoc=" in page._repr_html_() and page.meta["parts"][0]["keys"] == t.tokens


def test_an_image_model_traces_its_example_and_captures_gradients_for_rollout():
    model = attnviz.load("shapes", device="cpu")
    t = model.trace(grad=False)  # the example image, without gradients
    assert t.trace.kind == "vit" and "image" in t.arrays and "L0.grad" not in t.arrays
    fig = t.figure("rollout", size=(400, 300))
    assert "L0.grad" in fig.trace.arrays  # captured again, with gradients, for the view that shows them
    assert fig._repr_png_()[0].startswith(b"\x89PNG")
    assert t.figure("head-map").trace is t.trace  # other views draw the trace as it was


def test_cli_html_export_and_its_one_line_refusals(model_dir, tmp_path, capsys):
    out = tmp_path / "lines.html"
    assert main(["export", "--model", str(model_dir), "--text", TEXT, "--view", "token-lines", "--layer", "1",
                 "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and '"view": "token-lines"' in page
    for extra, says in [(["--view", "rollout"], "an interactive .html figure shows head-map, model, token-lines"),
                        (["--view", "head-map", "--all-heads"], "holds every layer and head already"),
                        (["--view", "head-map", "--layer", "7"], "layer 7 does not exist")]:
        capsys.readouterr()
        assert main(["export", "--model", str(model_dir), "--text", TEXT, *extra, "-o", str(tmp_path / "x.html")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
    assert not (tmp_path / "x.html").exists()


def test_a_figure_without_part_or_head_opens_where_the_app_and_export_do():
    """`attnviz.load("translate").trace().figure("head-map")` opened on decoder self-attention L0·H0 while the app
    and `attnviz export` open on cross-attention at the sharpest head; `figure("steps")` on self-attention at
    'na' rather than cross-attention at the row that wrote the last word."""
    from attnviz.analysis.walkthrough_default import default_selection

    t = attnviz.load("translate", device="cpu").trace()
    for view, page in (("head-map", "attention"), ("steps", "walkthrough")):
        fig = t.figure(view)
        d = default_selection(t.trace, page)
        assert (fig.state.part, fig.state.layer, fig.state.head, fig.state.query) == (
            d["part"], d["layer"], d["head"], d["query"]) and d["part"] == "cross"
    own = t.figure("head-map", part="self", layer=0, head=1)  # control: what the caller names is kept
    assert (own.state.part, own.state.layer, own.state.head, own.state.query) == ("self", 0, 1, None)
    d = default_selection(t.trace, "attention")
    assert t.html("head-map").meta["start"] == {"part": "cross", "layer": d["layer"], "head": d["head"]}
