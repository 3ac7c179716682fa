"""DatasetView: every head scored over many inputs — a layers × heads grid, a sortable table, the
selected head's mean attention pattern and the inputs where it fires most.

The scores come from ``attnviz.runtime.batch_scores`` run on a worker (``attnviz.gui.workers.run_job``)
with a private copy of the model; the GUI thread only queues the job and draws its result. Clicking
a cell or a table row selects that head in every view; clicking an input opens it in every view.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QListWidgetItem

from attnviz.analysis.head_scores import SCORE_LABELS, SCORES, score_label
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.dataset_fit import FitsOnScreen, fit_on_layout, fit_view
from attnviz.gui.views.dataset_controls import DEFAULT_INPUTS, SHORT, DatasetControls, choose_defined_score
from attnviz.gui.views.dataset_links import describe_item, open_input_in_app, window_model_ref
from attnviz.gui.views.dataset_pages import PagedGrid
from attnviz.gui.views.dataset_presented import PresentedFigureOnly
from attnviz.gui.views.dataset_scoring import score_dataset_job
from attnviz.gui.views.dataset_split import MAX_CELL_LABELS, DatasetSplit
from attnviz.gui.views.dataset_titles import grid_words
from attnviz.gui.views.dataset_source_choice import SourceChoice
from attnviz.gui.views.dataset_sources import missing_words, offered_sources
from attnviz.gui.views.dataset_widgets import (SHARE_SCORES, CellLabels, draw_mean_pattern,
                                               fill_score_table, fill_top_inputs, show_maps)
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.widgets.heatmap import LabelledHeatmap
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.runtime.model_copies import model_stamp

__all__ = ["DatasetView", "score_dataset_job", "DEFAULT_INPUTS"]


class DatasetView(PresentedFigureOnly, FitsOnScreen, PagedGrid, SourceChoice, BaseView):
    title = "Heads over a data set"
    tab_title = "Data set"  # the dock's tab: twelve tabs fit a 1920-px window without scrolling

    input_requested = Signal(object)  # an input to open in every view (text, image path or array)
    scores_ready = Signal(object)  # HeadScores, once computed

    def _build(self) -> None:
        # the heads named above the grid: under a real model's 30 layers they were scrolled out of view
        self.grid = LabelledHeatmap(self.style, top_axis=True)
        self.pattern = LabelledHeatmap(self.style, lock_aspect=True)
        self.figure.addItem(self.grid, row=0, col=0)
        self.figure.addItem(self.pattern, row=1, col=0)  # the dock's width: beside the grid, 14 rows got ~100 px
        # the grid's title names the score in one line; the model, the data and the colour scale go in a caption
        # under the figure (one long title wrapped to six lines in a 1280×720 dock and pushed both maps out of view)
        self.caption = make_title()
        self.figure.addItem(self.caption, row=2, col=0)
        DatasetSplit.share(self.figure, False, 1, 1)
        self.grid.image.on_click = self._grid_clicked
        self.grid.image.on_hover = self._grid_hovered
        self._parts = parts = DatasetControls()
        self.score_box, self.n_box, self.source_box = parts.score_box, parts.n_box, parts.source_box
        self.run_button, self.table = parts.run_button, parts.table
        self.table_button = parts.table_button
        self.top_label, self.top_list = parts.top_label, parts.top_list
        self.score_box.currentIndexChanged.connect(lambda *_: self._draw())
        self.source_box.activated.connect(self._source_picked)
        self.data_source: tuple[str, str] | None = None  # None: the task's held-out inputs (or the input on screen)
        self._kinds = offered_sources(None)  # the sources the data box offers for this model
        self.run_button.clicked.connect(self._run_clicked)
        self.table.cellClicked.connect(self._row_clicked)
        self.top_list.itemClicked.connect(self._input_clicked)
        self.controls.addWidget(parts.row, 1)
        # figure on top (scrolling in a narrow dock); below it the table over the selected head's top inputs
        self.split = DatasetSplit(self.canvas, parts.below, self.table, self.table_button)
        self.splitter, self.below = self.split.splitter, parts.below
        lay = self.layout()
        lay.removeWidget(self.canvas)
        lay.insertWidget(1, self.splitter, 1)
        lay.insertWidget(1, parts.notice)
        self._cell_labels = CellLabels(self.grid.vb, MAX_CELL_LABELS)
        self._build_pages(parts.row)
        fit_on_layout(self)
        self.failure = ""
        self.result = None
        self.ran_on: str | None = None  # the worker thread's name (tests: the GUI thread only queued it)
        self._ref = self._job = None
        self._job_id = 0
        self._cancel = threading.Event()
        self._progress = [0, 0]
        self._timer = QTimer(self)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self._show_progress)
        self.message = ""
        self._set_message("")
        show_maps((self.grid, self.pattern), False)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.split_below()

    def split_below(self) -> None:
        """Share the view's height between the figure and the table (:class:`DatasetSplit`)."""
        known = self.result is not None and self.score in self.result.scores.get(self.part, {})
        layers, heads = self.result.scores[self.part][self.score].shape if known else (1, 1)
        # a grid too large to write every head's number goes a page at a time (dataset_pages.py)
        self.split.arrange(self.width(), layers, heads, paged=known and layers * heads > MAX_CELL_LABELS)
        shape = self.split.page_shape if self.split.paged else (layers, heads)
        self.set_page_shape((layers, heads), shape)
        self.split.place(self.figure, self.pattern, self.caption, *shape)
        fit_view(self)

    @property
    def narrow(self) -> bool:
        return self.split.narrow

    def figure_size(self) -> QSize:
        return QSize(1200, 650)

    # -- computing -----------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        ref = window_model_ref(self, self.trace)
        self._stamp_was, self._stamp = getattr(self, "_stamp", None), model_stamp(ref) if ref else None
        self._kinds = offered_sources(self.trace, ref is not None)
        if self.data_source is not None and self.data_source[0] not in self._kinds:
            self.data_source = None  # a folder of images chosen for a vision model, and now a text model
        self._offer()
        if ref is None:
            self._cancel.set()
            self._ref, self.result = None, None
            self._clear()
            if self.trace is None:
                self._set_message(missing_words(None))
            else:  # a trace read from a file: its own scores
                self._show_current_only(missing_words(self.trace, runnable=False))
            return
        if self._on_screen_only():  # no data set: the input on screen, scored again whenever it changes
            self._ref = ref
            self._run_source()
        elif ref != self._ref or self._stamp != self._stamp_was:  # another model, or this one re-trained
            self._ref = ref
            self.start(force=True)

    def start(self, force: bool = False) -> None:
        """Score the current model's heads on ``n`` held-out inputs, on a worker thread."""
        from attnviz.gui.workers import run_job

        if self._ref is None or (self._job is not None and not force):
            return
        self._cancel.set()  # a running job for another model or size stops at its next batch
        self._cancel = cancel = threading.Event()
        n = self.n_box.value()
        self._progress = progress = [0, n]
        self.result = None
        self._clear()
        self._set_message(f"scoring the heads on {self._data_words(n)}…")

        def report(done, total):
            progress[0], progress[1] = done, total or n

        self._job_id += 1
        self.run_button.setText("Stop")
        kind, path = self.data_source or (None, None)
        self._job = run_job(score_dataset_job, self._ref, n, report, cancel.is_set, self._job_id,
                            corpus=path if kind == "corpus" else None, images=path if kind == "images" else None,
                            on_result=self._scored, on_error=self._failed)
        self._timer.start()

    def _run_clicked(self) -> None:
        if self._job is not None:
            self.stop()
        else:
            self.start(force=True)

    def stop(self) -> None:
        """Stop the running job at its next batch; the last result stays cleared."""
        if self._job is None:
            return
        self._cancel.set()
        self._job = None
        self._job_id += 1  # whatever it still sends is dropped
        self._timer.stop()
        self.run_button.setText("Score")
        done, total = self._progress
        self._set_message(f"stopped after {done} of {total} inputs: press Score to run again")
        self.set_hover_text("")

    def _scored(self, value) -> None:
        result, thread, job_id = value
        if job_id != self._job_id:  # an older job's answer (another model or size): dropped
            return
        self._job = None
        self.run_button.setText("Score")
        self._timer.stop()
        self.result, self.ran_on = result, thread
        rep = result.meta.get("n_repeated")
        self.set_hover_text(f"scored {result.n_inputs} {'held-out ' if self.data_source is None else ''}inputs"
                            + (f" and {rep} repeated random sequences" if rep else ""))
        self._fill_table()
        self._draw()
        self.scores_ready.emit(result)

    def _failed(self, message: str) -> None:
        if message == "cancelled":  # only a superseded or stopped job is cancelled: nothing to say
            return
        self._job = None
        self.run_button.setText("Score")
        self._timer.stop()
        # the status line said "scoring… 0/200 inputs" for good under a title saying the heads cannot be scored
        self.set_hover_text("not scored over a data set: the input on screen only")
        self._show_current_only(f"cannot score the heads: {message}")

    def _show_current_only(self, reason: str) -> None:
        """A notice, and the scores of the input on screen (numpy on the views' lane)."""
        self.failure = reason
        self._set_message(reason)
        self._parts.show_notice(reason)  # the data box beside it says "the input on screen only"
        if self.trace is not None:
            from attnviz.runtime.batch_scores import score_trace

            trace, job_id = self.trace, self._job_id
            self.run_in_background(lambda: (score_trace(trace), job_id), self._scored_trace)

    def _scored_trace(self, value) -> None:
        if isinstance(value, Exception) or value[1] != self._job_id:
            return
        self.result = value[0]
        self._fill_table()
        self._draw()

    def _show_progress(self) -> None:
        done, total = self._progress
        if self._job is not None:
            self.set_hover_text(f"scoring… {done}/{total} inputs")

    def closeEvent(self, event) -> None:
        self._cancel.set()
        self._timer.stop()
        super().closeEvent(event)

    # -- drawing -------------------------------------------------------------------------------
    @property
    def score(self) -> str:
        return self.score_box.currentData()

    @property
    def part(self) -> str:
        parts = self.result.parts if self.result is not None else ["self"]
        return self.state.part if self.state.part in parts else parts[0]

    def _set_message(self, text: str) -> None:
        self.message = text
        self.grid.set_title(text or "Scores of every head over a data set")
        self._set_caption("")

    def _set_caption(self, text: str) -> None:
        set_title(self.caption, text, self.style, 1.0)  # the base size: the audit holds every label to 12 px
        self.caption.setVisible(bool(text))

    def _clear(self) -> None:
        self._cell_labels.clear()
        self.clear_page()
        self.grid.set_image(np.zeros((1, 1), np.uint8), (1, 1))
        self.pattern.set_image(np.zeros((1, 1), np.uint8), (1, 1))
        self.pattern.set_title("")
        self._set_caption("")
        self.table.setRowCount(0)
        self.top_list.clear()
        show_maps((self.grid, self.pattern), False)
        self._parts.show_notice("")

    def score_table(self) -> np.ndarray:
        """(L, H) values of the chosen score for the shown part (NaN: not defined)."""
        table = self.result.scores[self.part]
        shape = next(iter(table.values())).shape
        return table.get(self.score, np.full(shape, np.nan))

    def _label(self, name: str) -> str:
        """The score's label for the result shown (rep-ind where no induction probe ran)."""
        return score_label(name, self.result.meta if self.result is not None else None)

    def _name_scores(self) -> None:
        """Name the induction and previous-token columns and choices for what the result measured (the probe or
        the inputs' repeats; a token or, for a vision model, a patch in reading order)."""
        for name, other in (("induction", "rep-ind"), ("previous_token", "prev-patch")):
            label = self._label(name)
            self.score_box.setItemText(self.score_box.findData(name), label)
            header = self.table.horizontalHeaderItem(3 + SCORES.index(name))
            if header.text() != (text := other if label != SCORE_LABELS[name] else SHORT[name]):
                header.setText(text)
                self.table.resizeColumnToContents(3 + SCORES.index(name))  # sized for the old name: "rev-patc"
            header.setToolTip(label)

    def _draw(self) -> None:
        if self.result is None:
            return
        self._name_scores()
        was = choose_defined_score(self.score_box, self.result.score_names(self.part), self._parts.wanted_score)
        if was is not None:  # said in the title while the chosen score is shown (the user's pick clears it)
            self._chosen_for = (self._label(was), self.score, self.part)
        values = self.score_table()
        L, H = values.shape
        self.split_below()  # a narrow view's figure is as tall as this model's grid needs
        show_maps((self.grid, self.pattern), True)
        undefined = ~np.isfinite(values)
        finite = values[~undefined]
        if self.score in SHARE_SCORES:
            # a share is read against 0–1 (on the data's range, scores of 0.07–0.09 drew a bright row)
            lo, hi, how = 0.0, 1.0, " · fixed scale 0–1"
        else:
            hi = float(finite.max()) if finite.size else 1.0
            lo = min(0.0, float(finite.min())) if finite.size else 0.0
            hi, how = (hi if hi > lo else lo + 1.0), " · scale: the largest head"
        self.grid.set_image(quantize(np.nan_to_num(values, nan=lo), hi, undefined, vmin=lo), (L, H))
        self.grid.set_labels([f"L{i}" for i in range(L)], [f"H{h}" for h in range(H)])
        self.grid.set_mask(undefined)
        natural = self.score == "induction" and self._label(self.score) != SCORE_LABELS[self.score]
        self.grid.set_levels(lo, hi, ("rep-ind" if natural else self._label(self.score)) + how)  # (the bar's short name)
        # every cell carries its number: no bar (the grid is a few layers tall, and the bar's rotated label, longer
        # than the bar, ran over its ticks); the title says the colour scale instead
        written = L * H <= MAX_CELL_LABELS or self.split.paged
        self.grid.bar.set_style(self.style if not written else replace(self.style, colour_bar=False))
        self.grid.bar.setVisible(not written)
        # the caption sits under the mean pattern (its own bar: "own maximum"): it names the grid it speaks of
        how = how.replace(" · ", " · head grid colours: ", 1) if written else ""
        title, caption = grid_words(self.result, self.score, self.part, self._label, held_out=self.data_source is None,
                                    failure=self.failure, chosen_for=getattr(self, "_chosen_for", None), how=how,
                                    undefined=undefined)
        self.grid.set_title(title)
        self.write_cells(values, lo, hi, caption)
        self._show_head()

    def _show_head(self) -> None:
        """Mean pattern and top inputs of the selected head."""
        if self.result is None:
            return
        values = self.score_table()
        L, H = values.shape
        layer, head = min(self.state.layer, L - 1), min(self.state.head, H - 1)
        self.follow_page(layer, head)
        self.grid.set_highlight(layer, head)
        self.grid.image.setToolTip("")
        pat = self.result.patterns.get(self.part)
        if pat is not None:
            draw_mean_pattern(self.pattern, pat[layer, head], layer, head)
        self._fill_top(layer, head)

    def _fill_top(self, layer: int, head: int) -> None:
        self.top_label.setText(f"inputs where layer {layer} head {head} scores highest on "
                               f"{self._label(self.score)} (click: open in every view)")
        fill_top_inputs(self.top_list, self.result, self.part, self.score, layer, head)

    def _fill_table(self) -> None:
        fill_score_table(self.table, self.result)
        self.split_below()  # the table's rows decide its share

    def _selection_changed(self, state, changed) -> None:
        if self.result is not None and changed & {"layer", "head", "part"}:
            if "part" in changed:
                self._draw()
            else:
                self._show_head()

    def _style_changed(self) -> None:
        self.grid.set_style(self.style)
        self.pattern.set_style(self.style)
        self._draw()

    # -- interaction ---------------------------------------------------------------------------
    def select_head(self, layer: int, head: int, part: str | None = None) -> None:
        """Select a head in every view."""
        if self.selection is not None:
            changes = {"layer": int(layer), "head": int(head)}
            if part is not None and part != self.state.part:
                changes["part"] = part
            self.selection.update(**changes)

    def _grid_clicked(self, row: int, col: int) -> None:
        self.select_head(row, col)

    def _grid_hovered(self, row, col) -> None:
        if row is None or self.result is None:
            self.set_hover_text("")
            return
        v = self.score_table()[row, col]
        text = "not defined" if not np.isfinite(v) else f"{v:.3f}"
        self.set_hover_text(f"layer {row}, head {col}: {self._label(self.score)} {text}")

    def _row_clicked(self, row: int, _col: int) -> None:
        part = self.table.item(row, 0).text()
        self.select_head(int(self.table.item(row, 1).value), int(self.table.item(row, 2).value), part)

    def open_input(self, index: int) -> None:
        """Open input ``index`` of the data set in every view of the app."""
        item = self.result.inputs[index]
        self.input_requested.emit(item)
        if open_input_in_app(self, item):
            self.set_hover_text(f"opened {describe_item(item)}")

    def _input_clicked(self, item: QListWidgetItem) -> None:
        self.open_input(int(item.data(Qt.ItemDataRole.UserRole)))
