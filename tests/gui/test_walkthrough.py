"""The walkthrough tab: the same numbers as `attnviz steps --json`, matrix form, sandbox, what-if, export."""

import json
import math
import os
import xml.etree.ElementTree as ET

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgGenerator  # noqa: E402

from attnviz.analysis.steps import compute_matrix_form  # noqa: E402
from attnviz.cli import main  # noqa: E402
from attnviz.gui.figure_render import ExportOptions, export_widget  # noqa: E402
from attnviz.gui.walkthrough import (MatrixFormWidget, SandboxWidget, WalkthroughPage,  # noqa: E402
                                     WalkthroughWidget, WhatIfPanel, sync_runner)
from attnviz.gui.walkthrough.number_format import format_number  # noqa: E402
from attnviz.models import ModelConfig, build_model  # noqa: E402
from attnviz.models.attention import Attention  # noqa: E402
from attnviz.models.checkpoint import save_checkpoint  # noqa: E402
from attnviz.runtime import load_model, run_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402
from attnviz.text import Tokenizer  # noqa: E402

TEXT = "the animal did not cross the street because it was tired"


def _model_dir(path, kind="decoder", **overrides):
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
    return _model_dir(tmp_path / "dec", n_kv_heads=2)


def _trace(model_dir, text=TEXT):
    return run_trace(load_model(model_dir, device="cpu"), text=text, precision="float32", rollout=False)


def _shown(qtbot, widget, size=(1400, 900)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_walkthrough_shows_the_numbers_of_steps_json(gqa_decoder, qtbot, capsys):
    layer, head, query = 1, 3, 4
    assert main(["steps", "--model", str(gqa_decoder), "--text", TEXT, "--layer", str(layer), "--head", str(head),
                 "--query", str(query), "--json", "--device", "cpu"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sel = Selection()
    sel.update(layer=layer, head=head, query=query)
    w = _shown(qtbot, WalkthroughWidget(sel))
    w.set_trace(_trace(gqa_decoder))
    assert w.step_list == ["project", "score", "scale", "mask", "softmax", "weight", "sum"]  # causal: mask step
    assert w.gqa.isVisible() and (w.gqa.n_heads, w.gqa.n_kv_heads, w.gqa.selected) == (4, 2, head)
    seen = set()
    for i in range(len(w.step_list)):
        w.set_step(i)
        for name, grid in w.grids.items():
            expected = np.array([float(x) for x in np.ravel(doc[name])]).reshape(grid.values.shape)
            shown = np.array([[float(grid.exact_text(r, c)) for c in range(grid.values.shape[1])]
                              for r in range(grid.values.shape[0])])
            np.testing.assert_array_equal(shown, expected, err_msg=f"step {w.step_name}, grid {name}")
            assert grid.cell_text(0, 0) == format_number(expected[0, 0])
            seen.add(name)
    assert seen >= {"x_i", "W_Q", "W_K", "W_V", "q_i", "k", "v", "scores", "scaled", "mask", "masked", "weights",
                    "weighted", "z_i", "z_trace"}
    w.set_step(2)
    texts = " ".join(lab.text() for lab in w.board.items if hasattr(lab, "text"))
    assert f"{doc['scale']:.4g}" in texts  # the model's scale, 1/√d_head = 0.5
    np.testing.assert_allclose(doc["z_i"], doc["z_trace"], atol=1e-5)


def test_clicking_a_token_makes_it_the_query(gqa_decoder, qtbot):
    sel = Selection()
    w = _shown(qtbot, WalkthroughWidget(sel))
    w.set_trace(_trace(gqa_decoder))
    assert w.steps.query == len(w.trace.tokens) - 1  # no query selected: the last token, as the CLI does
    box = w.tokens._layout(w.tokens.width())[2]
    qtbot.mouseClick(w.tokens, Qt.LeftButton, pos=box.center().toPoint())
    assert sel.query == 2 and w.steps.query == 2 and w.tokens.query == 2


def test_back_forward_and_slider(gqa_decoder, qtbot):
    w = _shown(qtbot, WalkthroughWidget())
    w.set_trace(_trace(gqa_decoder))
    assert w.step_name == "project" and not w.back_button.isEnabled()
    qtbot.mouseClick(w.next_button, Qt.LeftButton)
    assert w.step_name == "score" and set(w.grids) == {"q_i", "k", "scores"}
    w.slider.setValue(len(w.step_list) - 1)
    assert w.step_name == "sum" and not w.next_button.isEnabled()
    qtbot.mouseClick(w.back_button, Qt.LeftButton)
    assert w.step_name == "weight"


def test_hover_shows_the_exact_value(gqa_decoder, qtbot):
    w = _shown(qtbot, WalkthroughWidget())
    w.set_trace(_trace(gqa_decoder))
    w.set_step(1)
    grid = w.grids["scores"]
    area, cw, ch = grid._cells()
    pos = QPointF(area.left() + cw / 2, area.top() + 2.5 * ch)  # row 2
    ev = QMouseEvent(QEvent.MouseMove, pos, grid.mapToGlobal(pos), Qt.NoButton, Qt.NoButton, Qt.NoModifier)
    grid.mouseMoveEvent(ev)
    exact = repr(float(w.steps.scores[2]))
    assert exact in w.hover_text and exact in grid.toolTip()
    assert grid.cell_text(2, 0) != exact  # the cell itself shows a rounded number


def test_encoder_has_no_mask_step_and_selection_is_clamped_locally(tmp_path, qtbot):
    enc = _model_dir(tmp_path / "enc", kind="encoder")
    sel = Selection()
    sel.update(layer=5, head=9, query=40)  # out of range for this model and text
    w = _shown(qtbot, WalkthroughWidget(sel))
    w.set_trace(_trace(enc, "the animal was tired"))
    assert "mask" not in w.step_list and not w.gqa.isVisible()
    assert (w.steps.layer, w.steps.head, w.steps.query) == (1, 3, 4)
    assert (sel.layer, sel.head, sel.query) == (5, 9, 40)  # views never rewrite the shared selection


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_matrix_form_shows_the_layer_and_the_block(tmp_path, qtbot, norm):
    d = _model_dir(tmp_path / norm, n_kv_heads=2, norm=norm)
    trace = _trace(d)
    sel = Selection()
    sel.update(layer=1, head=2, query=3)
    w = _shown(qtbot, MatrixFormWidget(sel))
    w.set_trace(trace)
    w.set_section("all")
    f = compute_matrix_form(trace, 1)
    for name, arr in (("Q", f.Q[2]), ("K", f.K[2]), ("V", f.V[2]), ("QK", f.QK[2]), ("scaled", f.scaled[2]),
                      ("masked", f.masked[2]), ("P", f.P[2]), ("Z", f.Z[2]), ("W_O", f.W_O), ("out", f.out)):
        np.testing.assert_array_equal(w.grids[name].values, arr, err_msg=name)
    for h in range(4):
        np.testing.assert_array_equal(w.grids[f"Z{h}"].values, f.Z[h])
    np.testing.assert_array_equal(w.grids["h"].values, trace["L1.h"].astype(np.float64))
    np.testing.assert_array_equal(w.grids["resid"].values, trace["L1.resid"].astype(np.float64))
    stream = trace["L0.resid"].astype(np.float64)
    if norm == "pre":  # the picture's arithmetic holds for the model's own arrays: X + out = h
        np.testing.assert_allclose(stream + trace["L1.out"], trace["L1.h"], atol=1e-5)
        np.testing.assert_array_equal(w.grids["mlp"].values, w.grids["resid"].values - w.grids["h"].values)
    else:
        np.testing.assert_array_equal(w.grids["stream"].values, trace["L1.x"].astype(np.float64))
    assert w.grids["Q"].highlight_rows == {3}
    assert w.gqa.n_kv_heads == 2
    # one symbol, one meaning: X is what the projections read, R the residual stream
    np.testing.assert_array_equal(w.grids["X"].values, trace["L1.x"].astype(np.float64))
    assert w.grids["X"].title == "X" and w.grids["stream"].title.startswith("R ")
    titles = [g.title for g in w.grids.values()]
    assert sum(t == "X" or t.startswith("X ") for t in titles) == 1


def _slide_areas(widget, size=(1920, 1080)):
    """The grids' cell areas in slide pixels, laid out as `attnviz export --preset 16:9` does it
    (at screen size, then scaled up by layout_scale)."""
    from attnviz.gui.figure_render import layout_scale
    from attnviz.gui.walkthrough.figure import _settle

    s = layout_scale(*size)
    old = widget.figure_widget.size()
    widget.scroll.setWidgetResizable(False)
    widget.figure_widget.resize(round(size[0] / s), round(size[1] / s))
    _settle(widget.figure_widget)
    areas = {name: g._cells()[0] for name, g in widget.grids.items()}
    widget.figure_widget.resize(old)
    widget.scroll.setWidgetResizable(True)
    return {name: QRectF(a.x() * s, a.y() * s, a.width() * s, a.height() * s) for name, a in areas.items()}


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_matrix_form_one_head_is_readable_on_a_slide(tmp_path, qtbot, kind):
    d = _model_dir(tmp_path / kind, kind=kind)
    trace = _trace(d, "the animal did not cross the street because it was too tired")  # 12 tokens (+[CLS])
    w = MatrixFormWidget()  # built off screen, as `attnviz export --view matrix-form` does
    qtbot.addWidget(w)
    w.set_trace(trace)
    w.ensure_current()
    assert w.section == "head"
    square = [n for n, g in w.grids.items() if g.values.shape[0] == g.values.shape[1] == len(trace.tokens)]
    assert {"QK", "P"} <= set(square) and ("masked" in square) == (kind == "decoder")
    areas = _slide_areas(w)
    for name in square:  # every T×T map at least 300 px each way on a 1920×1080 slide, labelled with the tokens
        assert areas[name].width() >= 300 and areas[name].height() >= 300, (name, areas[name])
        assert w.grids[name].row_labels == list(trace.tokens) == w.grids[name].col_labels
    b = w.grids["K"].title  # the model has biases: the formulas say so
    assert b == "K = X W_K + b_K" and w.grids["V"].title == "V = X W_V + b_V"
    f = compute_matrix_form(trace, 0)
    np.testing.assert_array_equal(w.grids["P"].values, f.P[0])
    w.set_section("output")  # the next part: Z = P V and the attention output, P as large
    areas = _slide_areas(w)
    assert areas["P"].width() >= 300 and areas["P"].height() >= 300, areas["P"]
    np.testing.assert_allclose(w.grids["out"].values, trace["L0.out"], atol=1e-5)


def test_matrix_form_leaves_out_biases_a_model_does_not_have(tmp_path, qtbot):
    trace = _trace(_model_dir(tmp_path / "nob", attn_bias=False))
    w = _shown(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    assert w.grids["Q"].title == "Q = X W_Q" and w.grids["K"].title == "K = X W_K"


def test_matrix_form_of_a_long_input_is_computed_off_the_gui_thread(tmp_path, qtbot):
    from attnviz.gui.walkthrough.matrix_form_widget import SYNC_LIMIT

    d = _model_dir(tmp_path / "long", max_len=SYNC_LIMIT + 40)
    trace = _trace(d, " ".join([TEXT] * 15))
    assert len(trace.tokens) > SYNC_LIMIT
    w = _shown(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    assert w.form is None  # returned at once, matrices still coming
    qtbot.waitUntil(lambda: w.form is not None, timeout=20000)
    assert w.grids["P"].values.shape == (len(trace.tokens),) * 2 and not w.grids["P"].numbers_shown


def test_sandbox_seed_003_numbers_and_cell_errors(qtbot):
    w = _shown(qtbot, SandboxWidget(debounce_ms=10))
    np.testing.assert_array_equal(w.grids["scores"].values, [[2, 0, 2], [0, 8, 4], [2, 4, 4]])
    e = math.e
    np.testing.assert_allclose(w.grids["P"].values[0], [e / (2 * e + 1), 1 / (2 * e + 1), e / (2 * e + 1)])
    assert w.grids["P"].cell_text(0, 0) == "0.42" and w.grids["P"].numbers_shown
    good = w.grids["Z"].values.copy()
    text = "1 0 1 0\n0 2 0 two\n1 1 1 1"
    w.set_matrix_text("X", text)
    qtbot.waitUntil(lambda: bool(w.errors), timeout=2000)
    (err,) = w.errors
    assert (err.matrix, err.row, err.col) == ("X", 1, 3)
    (mark,) = w.editors["X"].extraSelections()
    assert mark.cursor.selectedText() == "two"
    assert "row 2, column 4" in w.error_label.text()
    np.testing.assert_array_equal(w.grids["Z"].values, good)  # the last good numbers stay on screen
    w.set_matrix_text("W_K", "1 0 0\n0 1 0\n0 0 1\n0 0 0")  # d_k differs from W_Q's
    w.set_matrix_text("X", text.replace("two", "2"))
    w.recompute()
    assert [e.matrix for e in w.errors] == ["W_K"] and "same length d_k" in w.errors[0].message
    w.load_preset("parameter-free")
    assert not w.errors and w.config().mode == "parameter-free" and not w.editors["W_Q"].isVisible()
    G = w.result.X @ w.result.X.T
    P = np.exp(G) / np.exp(G).sum(1, keepdims=True)
    np.testing.assert_allclose(w.grids["Z"].values, P @ w.result.X)


def test_sandbox_exports_numbers_as_svg_text(qtbot, tmp_path):
    w = _shown(qtbot, SandboxWidget())
    out = export_widget(w, tmp_path / "sandbox.svg", ExportOptions(width=1400, height=900))
    texts = _svg_texts(out)
    for number in ("0.42", "0.87", "0.16"):  # seed 003's softmax weights, as text not pixels
        assert number in texts


def _svg_texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    return ["".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")]


def test_render_figure_leaves_out_the_controls(gqa_decoder, qtbot, tmp_path):
    w = WalkthroughWidget()  # never shown: export renders it off screen
    qtbot.addWidget(w)
    w.set_trace(_trace(gqa_decoder))
    w.set_step(w.step_list.index("sum"))
    gen = QSvgGenerator()
    gen.setFileName(str(tmp_path / "fig.svg"))
    gen.setSize(QSize(1200, 800))
    gen.setViewBox(QRectF(0, 0, 1200, 800))
    p = QPainter(gen)
    w.render_figure(p, QRectF(0, 0, 1200, 800))
    p.end()
    texts = _svg_texts(tmp_path / "fig.svg")
    assert format_number(w.steps.z_i[0]) in texts and "◀ Back" not in texts
    assert any("Step 6" in t for t in texts)


def test_whatif_panel_reruns_off_the_gui_thread(tmp_path, qtbot):
    d = _model_dir(tmp_path / "enc", kind="encoder")
    loaded = load_model(d, device="cpu")
    panel = _shown(qtbot, WhatIfPanel(debounce_ms=0))  # its own model lane: a worker thread
    panel.set_model(loaded)
    panel.set_input(text=TEXT)
    panel.rerun()
    assert panel.comparison is None  # the GUI thread only queued the job
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=20000)
    assert panel.comparison.whatif.is_default and panel.comparison.changed == 0.0
    for box in panel.head_checks.values():
        box.setChecked(True)
    panel.rerun()
    qtbot.waitUntil(lambda: panel.comparison is not None and len(panel.comparison.whatif.ablate) == 8, timeout=20000)
    assert panel.comparison.changed > 0.01 and "P_after" in panel.grids
    assert all(m.head_gate is None for m in loaded.model.modules() if isinstance(m, Attention))  # restored
    panel.reset()
    panel.pos_box.setChecked(False)
    panel.permute()
    qtbot.waitUntil(lambda: panel.permutation is not None, timeout=20000)
    assert panel.permutation.equivariant and "P_diff" in panel.grids
    panel._own_lane.wait()


def test_whatif_scale_none_sharpens_attention(tmp_path, qtbot):
    loaded = load_model(_model_dir(tmp_path / "enc", kind="encoder"), device="cpu")
    panel = _shown(qtbot, WhatIfPanel(run_async=sync_runner))
    panel.set_model(loaded)
    panel.set_input(text=TEXT)
    panel.scale_box.setCurrentIndex(panel.scale_box.findData("none"))
    panel.rerun()
    c = panel.comparison
    assert c.whatif.scale == "none" and c.entropy_after.mean() < c.entropy_before.mean()
    assert any("saturates" in lab.text() for lab in panel.board.items if hasattr(lab, "text"))
    # the figure fits beside the controls in a 1200-px window (no horizontal scrolling)
    qtbot.wait(10)  # the layout settles
    assert panel.figure_widget.minimumSizeHint().width() <= 1200 - 360


def test_a_narrow_grid_stacks_its_shape_under_its_name(qtbot):
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    grid = MatrixGrid("W_Q")
    grid.set_data(np.zeros((64, 16)), title="W_Q", subtitle="64 × 16")
    title_w, sub_w = grid._title_parts()
    _shown(qtbot, grid, size=(int(title_w + sub_w) + 10, 400))
    assert not grid._subtitle_below()
    top = grid._margins()[1]
    grid.resize(int(max(title_w, sub_w)) + 2, 400)
    assert grid._subtitle_below() and grid._margins()[1] > top  # a second title line, never a cut
    assert grid.minimumSizeHint().width() >= max(title_w, sub_w)


def test_page_mounts_all_four(gqa_decoder, qtbot):
    page = WalkthroughPage(Selection(), run_async=sync_runner)
    _shown(qtbot, page)
    loaded = load_model(gqa_decoder, device="cpu")
    page.set_model(loaded)
    page.set_trace(_trace(gqa_decoder))
    assert page.whatif.text == TEXT  # taken from the trace's input text
    qtbot.wait(400)  # past the debounce: a hidden what-if tab queues no model runs
    assert page.whatif.comparison is None
    page.setCurrentWidget(page.whatif)
    assert page.whatif.comparison is not None and page.whatif.comparison.whatif.is_default
    for i in range(page.count()):
        page.setCurrentIndex(i)
        qtbot.wait(10)
        img = page.current_view().grab().toImage()
        assert img.width() > 100
    page.whatif._timer.stop()


def test_matrix_form_marks_an_ablated_head(gqa_decoder, qtbot):
    from attnviz.whatif import WhatIf, run_whatif

    trace = run_whatif(load_model(gqa_decoder, device="cpu"), WhatIf(ablate={(0, 1)}), TEXT)
    w = _shown(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    w.set_section("heads")
    assert "(ablated)" in w.grids["Z1"].title and not w.grids["Z1"].values.any()
    assert "(ablated)" not in w.grids["Z0"].title and w.grids["Z0"].values.any()
    np.testing.assert_allclose(w.grids["out"].values, trace["L0.out"], atol=1e-5)  # concat · W_O + b_O


def test_signed_colours_are_centred_and_symmetric():
    from attnviz.gui.walkthrough.colour_scales import signed_colours

    c = signed_colours(np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 5.0]), 2.0).astype(int)
    assert tuple(c[2]) == (247, 247, 247)  # 0 is white: no colour claims a sign it does not have
    assert c[0][2] > c[0][0] and c[4][0] > c[4][2]  # negative blue, positive red
    # ±1 are equally far from white, and values beyond the limit clip to its colour
    assert abs(np.abs(c[1] - 247).sum() - np.abs(c[3] - 247).sum()) < 40
    assert tuple(c[5]) == tuple(c[4])


def test_steps_are_named_six_and_32_tokens_keep_labels_and_numbers(tmp_path, qtbot):
    from attnviz.gui.walkthrough.step_panels import step_label

    assert step_label("softmax") == "step 4 of 6 · softmax"  # the mask does not renumber the six steps
    assert step_label("mask") == "mask · between steps 3 and 4"
    text = " ".join((TEXT.split() * 3)[:32])
    trace = _trace(_model_dir(tmp_path / "dec"), text)
    assert len(trace.tokens) == 32
    w = _shown(qtbot, WalkthroughWidget(), size=(1200, 800))  # the tab beside the docked panels
    w.set_trace(trace)
    assert w.step_label.text() == "step 1 of 6 · project"
    for step in ("score", "softmax", "weight"):
        w.set_step(w.step_list.index(step))
        qtbot.wait(10)
        column = w.grids["scores" if step == "score" else "weights"]
        assert column.numbers_shown and column.row_label_stride() <= 2, step  # thinned at most, never dropped
        assert column.row_labels == list(trace.tokens)


def test_whatif_top5_and_maps_are_labelled_before_any_switch(tmp_path, qtbot):
    loaded = load_model(_model_dir(tmp_path / "enc", kind="encoder"), device="cpu")
    panel = _shown(qtbot, WhatIfPanel(run_async=sync_runner), size=(1400, 900))
    panel.set_model(loaded)
    panel.set_input(text=TEXT)
    panel.rerun()  # as trained: no switch changed
    qtbot.wait(10)
    for name in ("top_before", "top_after"):
        g = panel.grids[name]
        assert sorted(g.row_labels) == ["a", "b", "c"]  # the model's three classes, each named
        assert g.row_label_stride() == 1
    for name in ("P_before", "P_after"):
        g = panel.grids[name]
        assert g.row_labels == g.col_labels == [str(t) for t in panel.comparison.before.tokens]
        assert g._show_col_labels() and g.row_label_stride() == 1
