"""The walkthrough tab's six steps and page: the same numbers as `attnviz steps --json`, clicking, hovering,
stepping, the four sub-tabs, colours and export of the steps figure (matrix form, sandbox and what-if:
test_walkthrough_matrix_whatif.py)."""

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgGenerator  # noqa: E402
from walkthrough_fixtures import TEXT, gqa_decoder, make_trace, model_dir, show_widget, svg_texts  # noqa: E402,F401

from attnviz.cli import main  # noqa: E402
from attnviz.gui.walkthrough import WalkthroughPage, WalkthroughWidget, sync_runner  # noqa: E402
from attnviz.gui.walkthrough.number_format import format_number  # noqa: E402
from attnviz.runtime import load_model  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def test_walkthrough_shows_the_numbers_of_steps_json(gqa_decoder, qtbot, capsys):
    layer, head, query = 1, 3, 4
    assert main(["steps", "--model", str(gqa_decoder), "--text", TEXT, "--layer", str(layer), "--head", str(head),
                 "--query", str(query), "--json", "--device", "cpu"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sel = Selection()
    sel.update(layer=layer, head=head, query=query)
    w = show_widget(qtbot, WalkthroughWidget(sel))
    w.set_trace(make_trace(gqa_decoder))
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
    w = show_widget(qtbot, WalkthroughWidget(sel))
    trace = make_trace(gqa_decoder)
    from attnviz.analysis.walkthrough_default import open_walkthrough, walkthrough_default

    open_walkthrough(sel, trace)  # what the window does as the tab comes on screen
    w.set_trace(trace)
    # the walkthrough's default head and query, as `attnviz steps`, the lesson and the pack
    assert (w.steps.layer, w.steps.head, w.steps.query) == walkthrough_default(w.trace)
    assert (sel.layer, sel.head, sel.query) == walkthrough_default(w.trace)
    box = w.tokens._layout(w.tokens.width())[2]
    qtbot.mouseClick(w.tokens, Qt.LeftButton, pos=box.center().toPoint())
    assert sel.query == 2 and w.steps.query == 2 and w.tokens.query == 2


def test_back_forward_and_slider(gqa_decoder, qtbot):
    w = show_widget(qtbot, WalkthroughWidget())
    w.set_trace(make_trace(gqa_decoder))
    assert w.step_name == "project" and not w.back_button.isEnabled()
    qtbot.mouseClick(w.next_button, Qt.LeftButton)
    assert w.step_name == "score" and set(w.grids) == {"q_i", "k", "scores"}
    w.slider.setValue(len(w.step_list) - 1)
    assert w.step_name == "sum" and not w.next_button.isEnabled()
    qtbot.mouseClick(w.back_button, Qt.LeftButton)
    assert w.step_name == "weight"


def test_hover_shows_the_exact_value(gqa_decoder, qtbot):
    w = show_widget(qtbot, WalkthroughWidget())
    w.set_trace(make_trace(gqa_decoder))
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
    enc = model_dir(tmp_path / "enc", kind="encoder")
    sel = Selection()
    sel.update(layer=5, head=9, query=40)  # out of range for this model and text
    w = show_widget(qtbot, WalkthroughWidget(sel))
    w.set_trace(make_trace(enc, "the animal was tired"))
    assert "mask" not in w.step_list and not w.gqa.isVisible()
    assert (w.steps.layer, w.steps.head, w.steps.query) == (1, 3, 4)
    assert (sel.layer, sel.head, sel.query) == (5, 9, 40)  # views never rewrite the shared selection


def test_render_figure_leaves_out_the_controls(gqa_decoder, qtbot, tmp_path):
    w = WalkthroughWidget()  # never shown: export renders it off screen
    qtbot.addWidget(w)
    w.set_trace(make_trace(gqa_decoder))
    w.set_step(w.step_list.index("sum"))
    gen = QSvgGenerator()
    gen.setFileName(str(tmp_path / "fig.svg"))
    gen.setSize(QSize(1200, 800))
    gen.setViewBox(QRectF(0, 0, 1200, 800))
    p = QPainter(gen)
    w.render_figure(p, QRectF(0, 0, 1200, 800))
    p.end()
    texts = svg_texts(tmp_path / "fig.svg")
    assert format_number(w.steps.z_i[0]) in texts and "◀ Back" not in texts
    assert any("Step 6" in t for t in texts)


def test_a_narrow_grid_stacks_its_shape_under_its_name(qtbot):
    from attnviz.gui.walkthrough.matrix_grid import MatrixGrid

    grid = MatrixGrid("W_Q")
    grid.set_data(np.zeros((64, 16)), title="W_Q", subtitle="64 × 16")
    title_w, sub_w = grid._title_parts()
    show_widget(qtbot, grid, size=(int(title_w + sub_w) + 10, 400))
    assert not grid._subtitle_below()
    top = grid._margins()[1]
    grid.resize(int(max(title_w, sub_w)) + 2, 400)
    assert grid._subtitle_below() and grid._margins()[1] > top  # a second title line, never a cut
    assert grid.minimumSizeHint().width() >= max(title_w, sub_w)


def test_page_mounts_all_four(gqa_decoder, qtbot):
    runs = []

    def counting_runner(kind, fn, *args, **kwargs):
        runs.append(kind)
        return sync_runner(kind, fn, *args, **kwargs)

    page = WalkthroughPage(Selection(), run_async=counting_runner)
    show_widget(qtbot, page)
    loaded = load_model(gqa_decoder, device="cpu")
    page.set_model(loaded)
    page.set_trace(make_trace(gqa_decoder))
    assert page.whatif.text == TEXT  # taken from the trace's input text
    # once the debounce has fired (the timer is the event), a hidden what-if tab has queued no model run
    qtbot.waitUntil(lambda: not page.whatif._timer.isActive(), timeout=5000)
    assert page.whatif.comparison is None and "compare" not in runs
    page.setCurrentWidget(page.whatif)
    assert page.whatif.comparison is not None and page.whatif.comparison.whatif.is_default
    for i in range(page.count()):
        page.setCurrentIndex(i)
        qtbot.wait(10)
        img = page.current_view().grab().toImage()
        assert img.width() > 100
    page.whatif._timer.stop()


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
    trace = make_trace(model_dir(tmp_path / "dec"), text)
    assert len(trace.tokens) == 32
    w = show_widget(qtbot, WalkthroughWidget(), size=(1200, 800))  # the tab beside the docked panels
    w.set_trace(trace)
    assert w.step_label.text() == "step 1 of 6 · project"
    for step in ("score", "softmax", "weight"):
        w.set_step(w.step_list.index(step))
        qtbot.wait(10)
        column = w.grids["scores" if step == "score" else "weights"]
        assert column.numbers_shown and column.row_label_stride() <= 2, step  # thinned at most, never dropped
        assert column.row_labels == list(trace.tokens)


def test_softmax_step_names_what_it_reads(gqa_decoder, tmp_path, qtbot):
    """The softmax's input column is the scaled scores (plus the mask where one applies), not raw "scores"."""
    w = show_widget(qtbot, WalkthroughWidget())
    w.set_trace(make_trace(gqa_decoder))  # causal decoder: the softmax reads scaled scores + M
    w.set_step(w.step_list.index("softmax"))
    assert w.grids["masked"].title == "scaled scores + M"
    enc = model_dir(tmp_path / "enc", kind="encoder")
    w.set_trace(make_trace(enc))  # an encoder without padding: nothing masked
    w.set_step(w.step_list.index("softmax"))
    assert w.grids["masked"].title == "scaled scores"
    np.testing.assert_allclose(w.grids["masked"].values.ravel(), w.steps.scaled, atol=1e-6)
