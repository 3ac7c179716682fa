"""Issue 36: nothing under 12 px in the analysis views of an image model, measured from the drawn scene with the
layout audit's own helpers. The real app drew the attention-distance legend ("head N") and the rollout panels'
captions at 10.8 px (0.9 × the 9 pt base), and the patch-filter tiles seven a row in a 260 px dock (a view resized
behind another tab kept the width it was first laid out for)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget  # noqa: E402

from layout_audit import MIN_PX, scene_problems  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.gui.views import AttentionDistanceView, FilterPCAView, RolloutView  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def _shown(qtbot, cls, trace, size=(673, 447)):
    """``cls`` at the size the 1280×720 window gives its dock, showing ``trace``."""
    view = cls(selection=Selection())
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_trace(trace)
    qtbot.waitExposed(view)
    return view


def _small(view) -> list[str]:
    return [p for p in scene_problems(view.canvas.scene(), 1.0, MIN_PX, type(view).__name__) if " px" in p]


def test_the_head_legend_of_attention_distance_is_12_px(qtbot):
    view = _shown(qtbot, AttentionDistanceView, sample_trace("vit", n_layers=3))
    qtbot.waitUntil(lambda: view.stats is not None, timeout=20_000)
    labels = [it for _, it in view.legend.items]
    assert [lab.text for lab in labels] == ["head 0", "head 1", "head 2", "head 3"]  # the measure sees them
    assert _small(view) == []
    # control: the same measure finds a legend drawn at the old 0.9 × base
    view.legend.setLabelTextSize(f"{view.style.font_pt(0.9):.1f}pt")
    assert any("'head 0' is 10.8 px" in p for p in _small(view)), _small(view)


@pytest.mark.parametrize("size", [(673, 447), (734, 682)], ids=["1280x720", "1920x1080"])
def test_rollout_panel_captions_are_12_px(qtbot, size):
    view = _shown(qtbot, RolloutView, sample_trace("vit", n_layers=3, grad=True), size)
    captions = [view.input_panel[0]] + [p[0] for p in view.panels.values()]
    assert all(c.isVisible() and c.text for c in captions)
    assert _small(view) == []
    # control: a caption at 0.9 × base is reported by the same measure
    from attnviz.gui.widgets.title import set_title

    set_title(captions[1], "raw attention<br>layer 2", view.style, 0.9)
    assert any("'raw attention" in p and "10.8 px" in p for p in _small(view)), _small(view)


def test_the_input_caption_names_the_grid_and_each_patchs_pixels(qtbot):
    """"a 4×4 grid of 2-pixel patches" still read as 4-pixel patches: the grid, then each patch's own size."""
    view = _shown(qtbot, RolloutView, sample_trace("vit", n_layers=2, grad=True))
    text = view.input_panel[0].text
    assert text == "input: 8 × 8 pixels<br>a 4 × 4 grid of patches, each 2 × 2 pixels", text


def test_patch_filter_tiles_fit_a_dock_resized_behind_another_tab(qtbot):
    """The 1280×720 window lays the dock out while another tab is in front: the tiles still fit its width."""
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("in front"), "in front")
    view = FilterPCAView(selection=Selection())
    tabs.addTab(view, "Patch filters")
    tabs.resize(1200, 800)
    tabs.show()
    qtbot.waitExposed(tabs)
    tabs.resize(270, 470)  # behind the front tab: the view's resize is deferred until it is shown
    view.set_trace(sample_trace("vit"))
    view.set_filters(np.random.default_rng(1).standard_normal((64, 3, 4, 4)))
    QApplication.processEvents()
    tabs.setCurrentIndex(1)
    for _ in range(10):
        QApplication.processEvents()
    room = view.scroll.viewport().width()
    assert view.cols == view._cols_for(room) and view.cols < 7, (view.cols, room)
    assert view._pitch_px() * view.cols <= room  # no tile cut at the right
    # control: the same view in a wide dock gets the paper's seven a row
    tabs.resize(1200, 800)
    for _ in range(10):
        QApplication.processEvents()
    assert view.cols == 7


@pytest.mark.parametrize("size", [(638, 447), (1100, 682)], ids=["1280x720", "1920x1080"])
def test_a_nine_head_legend_stays_inside_the_plot_and_off_the_points(qtbot, size):
    """A 30 × 9 model at 1280×720: eight entries a row ran past the plot's left edge ("ead 1") and the second
    row sat on the points."""
    view = _shown(qtbot, AttentionDistanceView, sample_trace("decoder", T=12, n_layers=30, n_heads=9, d_model=18),
                  size)
    qtbot.waitUntil(lambda: view.stats is not None and len(view.legend.items) == 9, timeout=30_000)
    for _ in range(5):
        QApplication.processEvents()
    plot = view.plot.vb.sceneBoundingRect()
    legend = view.legend.sceneBoundingRect()
    labels = [lab.sceneBoundingRect() for _, lab in view.legend.items]
    assert all(plot.left() <= r.left() and r.right() <= plot.right() + 1 for r in labels), (plot, labels)
    pts = view.points()
    inside = [view.plot.vb.mapViewToScene(pg.Point(x, y)) for x, y in pts[:, :2]]
    under = [p for p in inside if legend.contains(p)]
    assert not under, f"{len(under)} points under the legend {legend}"
    assert _small(view) == []
    # control: the measure sees a legend wider than the plot when forced back to eight a row
    view.legend.setColumnCount(8)
    QApplication.processEvents()
    if size[0] < 1000:
        assert view.legend.sceneBoundingRect().width() > plot.width() - 20


VIT_VIEWS = ("RolloutView", "AttentionDistanceView", "TokenEmbeddingView", "FilterPCAView", "PositionSimilarityView",
             "PositionalEncodingView", "HeadMapView", "TokenLinesView")


@pytest.mark.parametrize("name", VIT_VIEWS)
def test_every_run_of_text_in_an_image_models_views_is_12_px(qtbot, name):
    """Each run of text the figure draws as a text item, a smaller ``<span>`` inside a caption included (the
    rollout's scale line was 11.4 px, the embedding's point labels 10.8 px), at the 1280×720 dock size."""
    import attnviz.gui.views as views
    from drawn_text import small_text

    from PySide6.QtWidgets import QGraphicsTextItem

    view = _shown(qtbot, getattr(views, name), sample_trace("vit", n_layers=3, grad=True), (673, 447))
    # drawn (its text items are in the scene), then a layout pass to settle: a measure of nothing would pass
    qtbot.waitUntil(lambda: any(isinstance(i, QGraphicsTextItem) and i.isVisible() for i in view.canvas.scene().items()))
    qtbot.wait(150)
    assert small_text(view.canvas.scene(), MIN_PX, name) == []


def test_the_text_measure_sees_a_small_span_inside_a_caption(qtbot):
    """Control of the measure: a 0.9 × base run inside a 1.2 × base title is found, the title itself is not."""
    from drawn_text import small_text
    from attnviz.gui.widgets.title import set_title

    view = _shown(qtbot, RolloutView, sample_trace("vit", n_layers=2, grad=True))
    small = f"<span style='font-size: {view.style.font_pt(0.9):.1f}pt'>under</span>"
    set_title(view.title_item, f"Where does [CLS] get its information?<br>{small}", view.style)
    found = small_text(view.canvas.scene(), MIN_PX, "rollout")
    assert found == ["rollout: 'under' is 10.8 px"], found


def test_the_token_lines_headings_and_legend_are_12_px(qtbot):
    """Painted, not text items: the fonts the figure's painter is given while it draws."""
    from PySide6.QtGui import QImage, QPainter

    from layout_audit import pt_to_px

    class Recording(QPainter):
        def __init__(self, device):
            super().__init__(device)
            self.sizes = []

        def setFont(self, font):  # noqa: N802 - Qt's name
            self.sizes.append(pt_to_px(font.pointSizeF()))
            super().setFont(font)

    from attnviz.gui.views import TokenLinesView

    view = _shown(qtbot, TokenLinesView, sample_trace("vit", n_layers=2), (673, 447))
    qtbot.wait(150)  # a layout pass to settle (the painter's fonts are checked non-empty below)
    img = QImage(view.canvas.size(), QImage.Format.Format_RGB32)
    painter = Recording(img)
    try:
        view.lines.paint(painter, None)
    finally:
        painter.end()
    assert painter.sizes and min(painter.sizes) >= MIN_PX - 0.05, painter.sizes


@pytest.mark.parametrize("name,what", [("PositionalEncodingView", "encodings"), ("PositionSimilarityView", "embeddings")])
def test_a_rotary_model_says_where_its_positions_are_and_draws_no_bar(qtbot, name, what):
    """A Llama-family model (rotary) has no position table: "has no position encodings" beside an empty 0–1 bar
    read as a recording fault; the view says the positions are rotations inside attention, with no bar."""
    import attnviz.gui.views as views

    trace = sample_trace("decoder", T=8)
    del trace.arrays["emb.pos"]
    trace.meta["position"] = "rotary"  # what a Llama-family model's capture says
    view = _shown(qtbot, getattr(views, name), trace)
    title = view.heatmap.title.text
    assert f"No position {what} to draw" in title and "rotary (RoPE)" in title, title
    assert not view.heatmap.bar.isVisible()
    # control: the same view with the table back draws it with its bar
    view.set_trace(sample_trace("decoder", T=8))
    assert view.heatmap.bar.isVisible() and "rotary" not in view.heatmap.title.text


def test_the_data_set_combos_show_their_whole_text_in_a_1280x720_dock(qtbot):
    """The score box was as wide as its longest item ("share of gradient attribution"): in the 295 px dock of a
    1280×720 window it ran past the right edge, "previous-token score" cut with its arrow (this test's narrower
    dock: the offscreen font is narrower than the real one)."""
    from attnviz.gui.views.dataset_view import DatasetView

    view = DatasetView(selection=Selection())
    qtbot.addWidget(view)
    view.resize(255, 447)  # the docks beside the head map were 255-295 px wide
    view.show()
    qtbot.waitExposed(view)
    for _ in range(5):
        QApplication.processEvents()
    assert view.width() == 255, view.width()  # the view fits the dock: its minimum was the longest item's
    for box in (view.score_box, view.source_box):
        right = box.mapTo(view, box.rect().topRight()).x()
        text = box.fontMetrics().horizontalAdvance(box.currentText())
        assert right <= view.width() and box.width() >= text, (box.currentText(), right, box.width(), text)
    # control: the longest score chosen, the box grows to show it (the row wraps around it)
    view.score_box.setCurrentIndex(view.score_box.findText("share of gradient attribution"))
    for _ in range(5):
        QApplication.processEvents()
    assert view.score_box.width() >= view.score_box.fontMetrics().horizontalAdvance("share of gradient attribution")


def test_presenting_enlarges_the_rollout_input_caption_with_the_others(qtbot):
    """F5 restyles the figure: the input's caption kept its docked 9 pt beside 15 pt captions of the maps."""
    from attnviz.gui.style import PRESETS

    view = _shown(qtbot, RolloutView, sample_trace("vit", n_layers=2, grad=True))
    view.set_style(PRESETS["presentation"])
    sizes = {c.opts["size"] for c in [view.input_panel[0]] + [p[0] for p in view.panels.values()]}
    assert sizes == {f"{PRESETS['presentation'].font_pt(1.0):.1f}pt"}, sizes


def test_patch_filter_tiles_start_under_the_title_in_a_tall_box(qtbot):
    """Presented at 1280×720 the aspect-locked tiles were centred in a box taller than they needed: ~140 px empty
    under the title while the last rows and the noise note scrolled out of view."""
    from attnviz.gui.style import PRESETS

    view = _shown(qtbot, FilterPCAView, sample_trace("vit"), (1216, 662))
    view.set_style(PRESETS["presentation"])
    view.set_filters(np.random.default_rng(1).standard_normal((48, 3, 4, 4)))
    for _ in range(10):
        QApplication.processEvents()
    title = view.title_item.sceneBoundingRect().bottom()
    first = view.vb.mapViewToScene(pg.Point(0, 0)).y()  # the first row's top edge
    line = view.style.metrics().height()
    assert 0 <= first - title <= 2 * line, (title, first, line)
    # control: the tiles still fill the box's width (anchored, not shrunk)
    (x0, x1), _ = view.vb.viewRange()
    assert (x1 - x0) <= view.image.image.shape[1] * 1.05


def test_past_nine_heads_each_legend_colour_names_all_its_heads(qtbot):
    """A 14-head model: the colours repeat after nine; an entry per head gave heads 0 and 9 one colour under two
    names. One entry a colour, naming its heads, and the title says the colours repeat."""
    view = _shown(qtbot, AttentionDistanceView, sample_trace("decoder", T=10, n_layers=2, n_heads=14, d_model=28),
                  (1100, 682))
    qtbot.waitUntil(lambda: view.stats is not None and len(view.legend.items) > 0, timeout=30_000)
    labels = [lab.text for _, lab in view.legend.items]
    assert labels[0] == "heads 0, 9" and labels[4] == "heads 4, 13" and labels[5] == "head 5" and len(labels) == 9
    assert "colours repeat every 9 heads" in view.title_item.text
    # control: four heads, four entries of one head each, no word of repeating
    view.set_trace(sample_trace("vit", n_layers=2))
    qtbot.waitUntil(lambda: view.stats is not None and len(view.legend.items) == 4, timeout=30_000)
    assert [lab.text for _, lab in view.legend.items] == ["head 0", "head 1", "head 2", "head 3"]
    assert "repeat" not in view.title_item.text


def test_a_failed_scoring_run_leaves_no_scoring_progress_in_the_status_line(qtbot):
    """A model with no built-in task (a Hugging Face 30 × 9): the title said the heads cannot be scored while the
    status line kept "scoring… 0/200 inputs"."""
    from attnviz.gui.views.dataset_view import DatasetView

    view = _shown(qtbot, DatasetView, sample_trace("decoder", T=8), (295, 447))
    view._job = object()  # a run under way, as the Score button starts one
    view._progress = (0, 200)
    view._show_progress()
    assert view.hover_text == "scoring… 0/200 inputs"  # the measure sees the progress line
    view._failed("m has no built-in task to draw held-out inputs from")
    assert "scoring" not in view.hover_text and "input on screen only" in view.hover_text, view.hover_text
