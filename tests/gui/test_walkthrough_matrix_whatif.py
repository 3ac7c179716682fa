"""The walkthrough tab's matrix form, sandbox and what-if switches: the layer as matrices, readable on a
slide, computed off the GUI thread; typed toy numbers; re-runs with a switch (the six steps:
test_walkthrough.py)."""

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from walkthrough_fixtures import TEXT, gqa_decoder, make_trace, model_dir, show_widget, svg_texts  # noqa: E402,F401

from attnviz.analysis.steps import compute_matrix_form  # noqa: E402
from attnviz.figures.render import ExportOptions, export_widget  # noqa: E402
from attnviz.gui.walkthrough import MatrixFormWidget, SandboxWidget, WhatIfPanel, sync_runner  # noqa: E402
from attnviz.models.attention import Attention  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_matrix_form_shows_the_layer_and_the_block(tmp_path, qtbot, norm):
    d = model_dir(tmp_path / norm, n_kv_heads=2, norm=norm)
    trace = make_trace(d)
    sel = Selection()
    sel.update(layer=1, head=2, query=3)
    w = show_widget(qtbot, MatrixFormWidget(sel))
    w.set_trace(trace)
    w.set_section("all")
    f = compute_matrix_form(trace, 1)
    for name, arr in (("Q", f.Q[2]), ("K", f.K[2]), ("V", f.V[2]), ("QK", f.QK[2]), ("scaled", f.scaled[2]),
                      ("masked", f.masked[2]), ("P", f.P[2]), ("Z", f.Z[2])):
        np.testing.assert_array_equal(w.grids[name].values, arr, err_msg=name)
    # the heads row: concat(Z) × W_O = A, the many-heads figure (to scale)
    np.testing.assert_array_equal(w.concat_figure.W_O, f.W_O)
    np.testing.assert_array_equal(w.concat_figure.A, f.out)
    for h in range(4):
        np.testing.assert_array_equal(w.concat_figure.Z[h], f.Z[h])
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
    from attnviz.figures.render import layout_scale
    from attnviz.gui.walkthrough.figure import _settle

    from attnviz.gui.widgets.legible import exporting

    s = layout_scale(*size)
    old = widget.figure_widget.size()
    widget.scroll.setWidgetResizable(False)
    with exporting():  # the export's label floor (12 px on the slide), as render_figure lays it out
        widget.figure_widget.resize(round(size[0] / s), round(size[1] / s))
        _settle(widget.figure_widget)
        areas = {name: g._cells()[0] for name, g in widget.grids.items()}
    widget.figure_widget.resize(old)
    widget.scroll.setWidgetResizable(True)
    return {name: QRectF(a.x() * s, a.y() * s, a.width() * s, a.height() * s) for name, a in areas.items()}


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_matrix_form_one_head_is_readable_on_a_slide(tmp_path, qtbot, kind):
    d = model_dir(tmp_path / kind, kind=kind)
    trace = make_trace(d, "the animal did not cross the street because it was too tired")  # 12 tokens (+[CLS])
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
    np.testing.assert_allclose(w.concat_figure.A, trace["L0.out"], atol=1e-5)


def test_matrix_form_leaves_out_biases_a_model_does_not_have(tmp_path, qtbot):
    trace = make_trace(model_dir(tmp_path / "nob", attn_bias=False))
    w = show_widget(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    assert w.grids["Q"].title == "Q = X W_Q" and w.grids["K"].title == "K = X W_K"


def test_matrix_form_of_a_long_input_is_computed_off_the_gui_thread(tmp_path, qtbot):
    from attnviz.gui.walkthrough.matrix_form_widget import NAMED_ROWS, SYNC_LIMIT

    d = model_dir(tmp_path / "long", max_len=SYNC_LIMIT + 40)
    trace = make_trace(d, " ".join([TEXT] * 15))
    assert len(trace.tokens) > SYNC_LIMIT
    w = show_widget(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    assert w.form is None  # returned at once, matrices still coming
    qtbot.waitUntil(lambda: w.form is not None, timeout=20000)
    # one head's part shows NAMED_ROWS positions around the query, each row's softmax over every key
    assert w.form.n_queries == len(trace.tokens) and w.grids["P"].values.shape == (NAMED_ROWS,) * 2


def test_sandbox_seed_003_numbers_and_cell_errors(qtbot):
    w = show_widget(qtbot, SandboxWidget(debounce_ms=10))
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
    w = show_widget(qtbot, SandboxWidget())
    out = export_widget(w, tmp_path / "sandbox.svg", ExportOptions(width=1400, height=900))
    texts = svg_texts(out)
    for number in ("0.42", "0.87", "0.16"):  # seed 003's softmax weights, as text not pixels
        assert number in texts


def test_whatif_panel_reruns_off_the_gui_thread(tmp_path, qtbot):
    d = model_dir(tmp_path / "enc", kind="encoder")
    loaded = load_model(d, device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(debounce_ms=0))  # its own model lane: a worker thread
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
    loaded = load_model(model_dir(tmp_path / "enc", kind="encoder"), device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner))
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


def test_matrix_form_marks_an_ablated_head(gqa_decoder, qtbot):
    from attnviz.whatif import WhatIf, run_whatif

    trace = run_whatif(load_model(gqa_decoder, device="cpu"), WhatIf(ablate={(0, 1)}), TEXT)
    w = show_widget(qtbot, MatrixFormWidget())
    w.set_trace(trace)
    w.set_section("heads")
    fig = w.concat_figure  # the heads part is drawn to scale by one widget (concat_figure.py)
    assert fig.ablated == {1} and not fig.Z[1].any() and fig.Z[0].any()
    np.testing.assert_allclose(fig.A, trace["L0.out"], atol=1e-5)  # concat · W_O + b_O


def test_whatif_top5_and_maps_are_labelled_before_any_switch(tmp_path, qtbot):
    loaded = load_model(model_dir(tmp_path / "enc", kind="encoder"), device="cpu")
    panel = show_widget(qtbot, WhatIfPanel(run_async=sync_runner), size=(1400, 900))
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


@pytest.mark.parametrize("size", [(1280, 620), (1900, 960)])
def test_a_gqa_diagram_beside_q_k_v_names_every_head(gqa_decoder, qtbot, size):
    """A 4-query / 2-key-value model's diagram beside Q, K, V was squeezed to 5-px boxes without their names
    (the board gave it its minimum width)."""
    from PySide6.QtGui import QFontMetricsF

    from walkthrough_fixtures import matrix_form_shown

    w = matrix_form_shown(qtbot, make_trace(gqa_decoder), size)
    q_boxes, kv_boxes = w.gqa.boxes()
    name = QFontMetricsF(w.gqa.style.font(1.1)).horizontalAdvance("Q0")
    assert len(q_boxes) == 4 and len(kv_boxes) == 2
    assert all(b.width() >= name for b in q_boxes + kv_boxes), [b.width() for b in q_boxes]
    assert w.gqa.width() >= w.gqa.minimumSizeHint().width()  # control: the measure is the widget as laid out
