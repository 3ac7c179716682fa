"""Small walkthrough models and helpers shared by test_walkthrough.py and test_walkthrough_matrix_whatif.py."""

import os
import xml.etree.ElementTree as ET

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402

from attnviz.models import ModelConfig, build_model  # noqa: E402
from attnviz.models.checkpoint import save_checkpoint  # noqa: E402
from attnviz.runtime import load_model, run_trace  # noqa: E402
from attnviz.text import Tokenizer  # noqa: E402

__all__ = ["TEXT", "model_dir", "gqa_decoder", "make_trace", "show_widget", "svg_texts", "matrix_form_shown"]

TEXT = "the animal did not cross the street because it was tired"


def model_dir(path, kind="decoder", **overrides):
    """A small checkpoint with spread-out weights (attention far from uniform), saved like a real one."""
    tok = Tokenizer.build("word", [TEXT], prefix=["[CLS]"] if kind == "encoder" else [])
    cfg = dict(kind=kind, vocab_size=len(tok.vocab), n_layers=2, n_heads=4, d_model=16, max_len=32, mlp_ratio=2.0,
               head="lm" if kind == "decoder" else "classify", n_classes=3)
    cfg = ModelConfig(**{**cfg, **overrides})
    torch.manual_seed(3)
    model = build_model(cfg)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return save_checkpoint(path, model, cfg, {"task": None, "labels": ["a", "b", "c"]}, tokenizer=tok)


@pytest.fixture
def gqa_decoder(tmp_path):
    return model_dir(tmp_path / "dec", n_kv_heads=2)


def make_trace(model_dir, text=TEXT):
    return run_trace(load_model(model_dir, device="cpu"), text=text, precision="float32", rollout=False)


def show_widget(qtbot, widget, size=(1400, 900)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    return ["".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")]


def matrix_form_shown(qtbot, trace, size, query: int = 5, section: str | None = None, style=None):
    """A matrix form of ``trace`` (layer 0 · head 1, query ``query``) at ``size``, its section chosen, once its
    maps are built; ``style``: presented (controls hidden, as F5 shows it)."""
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.walkthrough.matrix_form_widget import MatrixFormWidget
    from attnviz.selection import Selection, SelectionState

    w = MatrixFormWidget(selection=Selection(SelectionState(layer=0, head=1, query=query)), style=style)
    qtbot.addWidget(w)
    if style is not None:
        w.set_controls_visible(False)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.set_trace(trace)
    if section is not None:
        w.set_section(section)
    qtbot.waitUntil(lambda: w.form is not None and "P" in w.grids, timeout=30_000)
    for _ in range(5):
        QApplication.processEvents()
    return w
