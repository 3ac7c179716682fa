"""The widgets of the "Heads over a data set" view that are not its figure: the controls row (which score
colours the grid, which inputs, how many, Score) and, under the figure, the sortable table of every head's
scores beside the list of inputs where the selected head fires most. Built here, wired by the view."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QLabel, QListWidget, QPushButton, QSpinBox,
                               QSplitter, QStyle, QStyleOptionComboBox, QTableWidget, QVBoxLayout, QWidget)

from attnviz.analysis.head_scores import SCORE_LABELS, SCORES
from attnviz.gui.views.dataset_sources import SOURCE_LABELS
from attnviz.gui.widgets.flow_row import FlowRow

__all__ = ["DatasetControls", "DEFAULT_INPUTS", "SHORT", "choose_defined_score"]

DEFAULT_INPUTS = 200
# the table's column headers (the full names are their tooltips)
SHORT = {"previous_token": "prev", "duplicate_token": "dup", "induction": "induct", "first_token": "sink",
         "entropy": "entropy", "distance": "dist", "gradient_share": "grad"}


class ShownTextCombo(QComboBox):
    """A combo box as wide as the item it shows, its list as wide as the longest item. Sized to its longest item
    ("share of gradient attribution") the score box ran past a 295 px dock at 1280×720 and was cut at the right;
    a fixed 90 px had shown "previous-t". The row wraps around it instead of widening the dock."""

    def __init__(self):
        super().__init__()
        self._sized_for: str | None = None  # the text the last size hint was measured on
        self.currentIndexChanged.connect(self.updateGeometry)
        self.model().dataChanged.connect(self.updateGeometry)  # the shown item renamed ("file: poems.txt")
        for signal in (self.model().rowsInserted, self.model().rowsRemoved, self.model().modelReset):
            signal.connect(self.updateGeometry)  # the items offered anew (another model's sources)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # a change made with the box's signals blocked (a score switched while drawing, the sources offered
        # for another model at the same index) emits nothing: the box kept the old text's width and cut
        # "first-token (sink) share" after a switch to translate (issue 36). Painting is the one step every
        # change of the shown text passes through.
        if self.currentText() != self._sized_for:
            self.updateGeometry()
        super().paintEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        self._sized_for = self.currentText()
        text = QSize(self.fontMetrics().horizontalAdvance(self.currentText()) + 4, self.fontMetrics().height())
        size = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, text, self)
        return QSize(size.width(), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.sizeHint()

    def showPopup(self) -> None:  # noqa: N802 - Qt's name
        widest = max((self.fontMetrics().horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        self.view().setMinimumWidth(widest + 32)  # every item whole in the list
        super().showPopup()


class DatasetControls:
    """The controls row (``row``) and the table-and-inputs splitter (``below``) of the data-set view."""

    def __init__(self):
        self.score_box = ShownTextCombo()
        for name in SCORES:
            self.score_box.addItem(SCORE_LABELS[name], name)
        # the last score picked, by the user or a caller (the view may show another): a change that signals, as
        # the view switches scores only with the box's signals blocked; connected before the view's redraw
        self.wanted_score = self.score_box.currentData()
        self.score_box.currentIndexChanged.connect(self._score_picked)
        self.n_box = QSpinBox()
        self.n_box.setRange(10, 10_000)
        self.n_box.setSingleStep(100)
        self.n_box.setValue(DEFAULT_INPUTS)
        self.source_box = ShownTextCombo()
        self.source_box.setToolTip("which inputs to score: a model's built-in task generates fresh held-out ones; "
                                   "a model without one is scored on a text file (or folder of images) you choose")
        self.run_button = QPushButton("Score")
        self.run_button.setToolTip("run the held-out inputs through the model again and score every head")
        self.row = FlowRow()
        for caption, widget in (("colour by:", self.score_box), ("data:", self.source_box), ("inputs:", self.n_box)):
            self.row.add_labelled(caption, widget)
        self.row.add(self.run_button)
        # a narrow dock (1280×720: ~274 px) shows the figure alone, the table and top inputs when asked (under a
        # 221 px figure the grid and the mean map were both cut); hidden where the table has room anyway
        self.table_button = QPushButton("Table")
        self.table_button.setCheckable(True)
        self.table_button.setToolTip("show every head's scores as a sortable table and the inputs where the "
                                     "selected head fires most (this narrow or low dock shows the figure alone until asked)")
        self.row.add(self.table_button)
        self.table = self._score_table()
        # what is missing when only the input on screen is scored, in one line under the controls: as the figure's
        # caption alone it sat under a 30-layer grid that scrolls, out of view
        self.figure_only = False  # presented: the notice is left to the figure's caption (dataset_presented.py)
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.top_label = QLabel("inputs where the head fires most")
        self.top_label.setWordWrap(True)
        self.top_list = QListWidget()
        self.top_list.setIconSize(QSize(48, 48))
        tops = QWidget()
        tops_lay = QVBoxLayout(tops)
        tops_lay.setContentsMargins(0, 0, 0, 0)
        tops_lay.addWidget(self.top_label)
        tops_lay.addWidget(self.top_list, 1)
        # the table over the top inputs, under the figure (controls, not part of an export): side by side,
        # the table had 3/5 of a ~650 px dock at 1920×1080 and scrolled sideways through its ten columns
        self.below = QSplitter(Qt.Orientation.Vertical)
        self.below.addWidget(self.table)
        self.below.addWidget(tops)
        self.below.setStretchFactor(0, 1)
        self.below.setStretchFactor(1, 1)
        self._tips = {w: w.toolTip() for w in (self.run_button, self.n_box)}
        self.offer_sources(["screen"], "screen")  # no model yet

    def offer_sources(self, kinds: list[str], current: str) -> None:
        """Offer the sources ``kinds`` (keys of SOURCE_LABELS) in the data box, ``current`` shown; Score and the
        number of inputs only where there is a data set to score."""
        box = self.source_box
        if [box.itemData(i) for i in range(box.count())] != list(kinds):
            was = box.blockSignals(True)
            box.clear()
            for kind in kinds:
                box.addItem(SOURCE_LABELS[kind], kind)
            box.blockSignals(was)
        box.setCurrentIndex(max(0, box.findData(current)))
        scored = current != "screen"
        for w in (self.run_button, self.n_box):
            w.setEnabled(scored)
            w.setToolTip(self._tips[w] if scored else "no data set to score: choose one under “data:”")

    def _score_picked(self, _index: int) -> None:
        self.wanted_score = self.score_box.currentData()

    def show_notice(self, text: str) -> None:
        """Say ``text`` over the figure (nothing: hidden); presented, the caption under the figure says it (12-px words
        above a slide repeated it)."""
        self.notice.setText(text)
        self.notice.setVisible(bool(text) and not self.figure_only)

    @staticmethod
    def _score_table() -> QTableWidget:
        table = QTableWidget(0, 3 + len(SCORES))
        table.setHorizontalHeaderLabels(["part", "layer", "head"] + [SHORT[s] for s in SCORES])
        for i, name in enumerate(SCORES):
            table.horizontalHeaderItem(3 + i).setToolTip(SCORE_LABELS[name])
        table.setSortingEnabled(True)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().setVisible(False)
        return table


def choose_defined_score(box: QComboBox, defined: list[str], wanted: str | None = None) -> str | None:
    """Switch ``box`` to the first score in ``defined`` when its own is not among them (previous-token on
    cross-attention: a grid of hatched cells and a title about the scores it could show instead), and back to
    ``wanted`` (the score last picked, or the first one) wherever that one is defined again: after translate's
    cross-attention every later model showed the sink share nobody had asked for.

    Returns the score it was on when it had to leave it (None: unchanged or back to ``wanted``). The box's signal
    is blocked: the caller is drawing."""
    now = box.currentData()
    if not defined:
        return None
    target = wanted if wanted in defined else now if now in defined else defined[0]
    if target == now:
        return None
    was = box.blockSignals(True)
    box.setCurrentIndex(box.findData(target))
    box.blockSignals(was)
    return None if target == wanted else now
