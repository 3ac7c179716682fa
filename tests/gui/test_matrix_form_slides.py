"""The matrix form on a projector: presentation mode at 1600×1000, 12 tokens, every T×T map ≥ 300 px, labelled."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attnviz.analysis.steps import compute_matrix_form  # noqa: E402
from attnviz.gui.style import PRESETS  # noqa: E402
from attnviz.gui.walkthrough import MatrixFormWidget  # noqa: E402
from attnviz.gui.walkthrough.matrix_form_widget import SECTIONS  # noqa: E402
from attnviz.models import ModelConfig, build_model  # noqa: E402
from attnviz.models.checkpoint import save_checkpoint  # noqa: E402
from attnviz.runtime import load_model, run_trace  # noqa: E402
from attnviz.text import Tokenizer  # noqa: E402

TEXT = "the animal did not cross the street because it was tired"  # 11 words (+ [CLS]: 12 tokens)


def _trace(path, kind):
    """A coref-sized model (d_model 64, 4 heads) on a 12-token input."""
    tok = Tokenizer.build("word", [TEXT], prefix=["[CLS]"])
    cfg = ModelConfig(kind=kind, vocab_size=len(tok.vocab), n_layers=2, n_heads=4, d_model=64, max_len=32,
                      mlp_ratio=2.0, head="lm" if kind == "decoder" else "classify", n_classes=3)
    torch.manual_seed(5)
    model = build_model(cfg)
    d = save_checkpoint(path, model, cfg, {"task": None, "labels": ["a", "b", "c"]}, tokenizer=tok)
    trace = run_trace(load_model(d, device="cpu"), text=TEXT, precision="float32", rollout=False)
    assert len(trace.tokens) == 12
    return trace


def _presented(qtbot, trace):
    """The widget as F5 shows it on a 1600×1000 screen: presentation style, controls hidden, full size."""
    w = MatrixFormWidget(style=PRESETS["presentation"])
    qtbot.addWidget(w)
    w.set_controls_visible(False)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    w.set_trace(trace)
    return w


def _on_screen(w, name):
    """The cell area of grid ``name`` in the widget's own pixels, and whether it lies inside the widget."""
    g = w.grids[name]
    area = g._cells()[0]
    top_left = g.mapTo(w, area.topLeft().toPoint())
    inside = (top_left.x() >= 0 and top_left.y() >= 0 and top_left.x() + area.width() <= w.width() + 1
              and top_left.y() + area.height() <= w.height() + 1)
    return area, inside


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_presented_matrix_form_keeps_every_tt_map_300_px_and_labelled(tmp_path, qtbot, kind):
    trace = _trace(tmp_path / kind, kind)
    w = _presented(qtbot, trace)
    for section in ("head", "output"):
        w.set_section(section)
        qtbot.wait(50)
        square = [n for n, g in w.grids.items() if g.values.shape == (12, 12)]
        assert "P" in square and (section != "head" or "QK" in square)
        for name in square:
            area, inside = _on_screen(w, name)
            assert area.width() >= 300 and area.height() >= 300 and inside, (section, name, area)
            g = w.grids[name]
            assert g.row_labels == list(trace.tokens) == g.col_labels
            assert g.row_label_stride() == 1 and g.col_label_stride() == 1, (section, name)  # every token named
        # the smaller matrices beside them name every token too (Q, K, V; Z, concat, A)
        for name, g in w.grids.items():
            if g.row_labels and g.values.shape[0] == 12:
                assert g.row_label_stride() == 1, (section, name)
                assert _on_screen(w, name)[1], (section, name)


def test_output_part_shows_the_models_z_and_attention_output(tmp_path, qtbot):
    trace = _trace(tmp_path / "enc", "encoder")
    w = _presented(qtbot, trace)
    w.set_section("output")
    f = compute_matrix_form(trace, min(w.state.layer, 1))
    head = w.grids["Z"].frame_colour and w._where()[2]
    np.testing.assert_allclose(w.grids["Z"].values, f.P[head] @ f.V[head], atol=1e-5)
    np.testing.assert_allclose(w.concat_figure.A, f.concat @ f.W_O + f.b_O, atol=1e-5)  # drawn to scale, one figure
    assert w.grids["Z"].title == f"Z = P V  (head {head})"


def test_page_down_walks_through_the_parts_of_the_layer(tmp_path, qtbot):
    w = _presented(qtbot, _trace(tmp_path / "enc", "encoder"))
    seen = [w.section]
    for _ in range(len(SECTIONS) + 1):  # what presentation mode's Page Down does; the last part stays
        w.set_step(w.slider.value() + 1)
        seen.append(w.section)
    assert seen == list(SECTIONS) + ["all", "all"]
    w.set_step(w.slider.value() - 10)
    assert w.section == "head"


def test_the_f5_hint_reads_the_matrix_forms_parts(tmp_path, qtbot):
    """F5's hint asks the figure for (part, count) through its ``slider``: the matrix form's answered no
    ``maximum()`` and entering presentation raised (seen with the 32 × 32 model); now part i of 5."""
    from attnviz.gui.panels.presentation_hint import step_position

    w = _presented(qtbot, _trace(tmp_path / "enc", "encoder"))
    w.set_step(2)
    assert step_position(w) == (2, len(SECTIONS))
