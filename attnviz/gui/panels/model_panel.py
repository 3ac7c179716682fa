"""Model panel: bundled models with their task, size and held-out metrics; open a folder; device."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QMenu, QPushButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from attnviz.gui.panels.model_catalogue import format_count

__all__ = ["ModelPanel"]

COLUMNS = ("Model (task)", "Params", "Held-out", "Architecture")
SHOWN_METRICS = 1  # the table shows the first metric (whole, in a 1920×1080 window); the tooltip has them all
_PATH = Qt.ItemDataRole.UserRole
_WORDS, _SCORE = Qt.ItemDataRole.UserRole + 1, Qt.ItemDataRole.UserRole + 2  # the held-out cell's two forms


class ModelPanel(QWidget):
    """Lists models; emits ``model_requested(name_or_dir)`` when the user picks one.

    The list arrives from a worker (:func:`set_catalogue`); until then it says it is loading.
    """

    model_requested = Signal(str)
    open_requested = Signal()
    device_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setToolTip("Double-click (or Enter) to load a model")
        self.tree.itemActivated.connect(self._activated)
        # the list's own width changes without the panel's (a scroll bar, the first layout after a catalogue)
        self.tree.viewport().installEventFilter(self)
        # columns are fitted, never scrolled: a horizontal bar that came and went with the columns changed the
        # viewport's height, so the vertical bar, so its width, and the refit chose the other columns, for ever
        # (63,000 refits in 40 s, the window never drew a trace)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fitted_width, self._refit = None, True
        self.tree.itemClicked.connect(self._activated)
        self._placeholder = QTreeWidgetItem(["looking for models…"])
        self._placeholder.setFlags(Qt.ItemFlag.NoItemFlags)
        self.tree.addTopLevelItem(self._placeholder)

        self.open_button = QPushButton("Open folder…", self)
        self.open_button.setToolTip("Load a model directory (config.json + model.safetensors); "
                                    "you can also drop a folder on the window (Ctrl+O)")
        self.open_button.clicked.connect(self.open_requested)
        # a push button with a menu: the style keeps room for its arrow (a tool button's arrow was drawn over
        # the "t" of "Recent")
        self.recent_button = QPushButton("Recent", self)
        self.recent_button.setToolTip("Model folders opened before")
        self.recent_menu = QMenu(self.recent_button)
        self.recent_button.setMenu(self.recent_menu)
        self.device_box = QComboBox(self)
        self.device_box.setToolTip("Where the model runs: CPU, or CUDA / Apple MPS when present")
        self.device_box.addItem("auto")
        self.device_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.device_box.currentTextChanged.connect(self.device_changed)

        self.details = QLabel("", self)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addWidget(self.recent_button)
        row.addStretch(1)
        # the device on a row of its own: beside the buttons it made the panel 297 px at least, and with the
        # Training page's minimum the window 1,317 px wide on a 1280×720 screen
        device = QHBoxLayout()
        device.addWidget(QLabel("Device:", self))
        device.addWidget(self.device_box)
        device.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.tree, 1)
        lay.addLayout(row)
        lay.addLayout(device)
        lay.addWidget(self.details)
        self._current = ""
        self.set_recent([])

    # -- filling -----------------------------------------------------------------------------------
    def set_catalogue(self, entries: list[dict]) -> None:
        """Show the models described by :func:`attnviz.gui.panels.model_catalogue.describe_model_dir`."""
        self.tree.clear()
        if not entries:
            item = QTreeWidgetItem(["no bundled models found — open a model folder"])
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.tree.addTopLevelItem(item)
            return
        for e in entries:
            name = e["name"] if e["task"] in ("", e["name"]) else f"{e['name']} ({e['task']})"
            metrics = ", ".join(e["metrics"].split(", ")[:SHOWN_METRICS])
            item = QTreeWidgetItem([name, format_count(e["params"]), metrics, e["architecture"]])
            item.setData(0, _PATH, e["name"])
            item.setData(2, _WORDS, metrics)
            item.setData(2, _SCORE, score_only(metrics))
            tip = e.get("error") or "\n".join(x for x in (
                f"{e['name']} — task {e['task'] or '?'}", e.get("description", ""), e["architecture"],
                f"held-out: {e['metrics']}", e["path"]) if x)
            for col in range(len(COLUMNS)):
                item.setToolTip(col, tip)
            if e.get("error"):
                item.setFlags(Qt.ItemFlag.NoItemFlags)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.tree.addTopLevelItem(item)
        self.set_current(self._current)
        self._refit = True  # new rows: fitted again even at the same width
        self.fit_columns()

    def fit_columns(self) -> None:
        """Every column whole or hidden, never cut: the list shows the metric's score alone, then drops
        Architecture, then Params, when it is too narrow for them; a row's tooltip still says everything."""
        width = self.tree.viewport().width()
        if width == self._fitted_width and not self._refit:
            return  # a resize of the same width (or one the last fit caused): nothing changes
        self._fitted_width, self._refit = width, False
        # a column counts more than the metric's words: the words first dropped the columns and kept
        # themselves, so a 1920×1080 list (wide enough for the words, not for words and Params) showed fewer
        # columns than a 1280×720 one (score form, Params kept). Fewest columns dropped first, words before
        # score at the same columns: a wider list never shows less.
        for shown in ([0, 1, 2, 3], [0, 1, 2], [0, 2]):  # Architecture, then Params, go first
            if self._fits(shown, width, _WORDS) or self._fits(shown, width, _SCORE):
                break
        for col in range(len(COLUMNS)):
            self.tree.setColumnHidden(col, col not in shown)

    def _fits(self, shown: list[int], width: int, form) -> bool:
        """Put the held-out cells in ``form`` (words or score); do columns ``shown`` fit ``width`` with them?
        The name and the held-out score always stay, so the last try is kept even when it does not fit."""
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(2, form) is not None:
                item.setText(2, item.data(2, form))
        return sum(self._need(c) for c in shown) <= width

    def _need(self, col: int) -> int:
        return max(self.tree.sizeHintForColumn(col), self.tree.header().sectionSizeHint(col))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_columns()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and obj is self.tree.viewport():
            self.fit_columns()
        return super().eventFilter(obj, event)

    def names(self) -> list[str]:
        """Names of the listed (loadable) models, in order."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            value = self.tree.topLevelItem(i).data(0, _PATH)
            if value:
                out.append(str(value))
        return out

    def set_current(self, name_or_dir: str) -> None:
        """Highlight the loaded model (nothing when it is not a listed one) without emitting; a folder that
        is a listed model's own folder (``attnviz path/to/assets/models/coref``) highlights that model."""
        self._current = name_or_dir
        listed = _listed_name(name_or_dir, self.names())
        self.tree.blockSignals(True)
        self.tree.clearSelection()
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, _PATH) == listed:
                item.setSelected(True)
                self.tree.setCurrentItem(item)
        self.tree.blockSignals(False)

    def show_loaded(self, loaded) -> None:
        """Details of the loaded model (a LoadedModel) under the list."""
        from attnviz.capture.compute_dtype import kept_in_words

        kept = kept_in_words(loaded.dtype)  # bfloat16: the trace's arrays are float32 (NumPy has none)
        # a folder's name and path are the user's text: escaped, never read as rich text
        self.details.setText(f"<b>{escape(loaded.name)}</b> · task {escape(loaded.task or '—')} · "
                             f"{loaded.n_params:,} parameters in {loaded.dtype} · on {loaded.device}"
                             f"{' · ' + kept if kept else ''}"
                             f"<br><small>{escape(str(loaded.path or ''))}</small>")

    def set_recent(self, paths: list[str]) -> None:
        self.recent_menu.clear()
        for p in paths:
            act = self.recent_menu.addAction(Path(p).name or p)
            act.setToolTip(p)
            act.setData(p)
            act.triggered.connect(lambda _=False, p=p: self.model_requested.emit(p))
        self.recent_button.setEnabled(bool(paths))

    def set_devices(self, devices: list[str], current: str = "auto") -> None:
        """Offer "auto" plus the devices present here (``attnviz.device.available_devices``)."""
        self.device_box.blockSignals(True)
        self.device_box.clear()
        self.device_box.addItems(["auto", *devices])
        idx = self.device_box.findText(current)
        self.device_box.setCurrentIndex(max(idx, 0))
        self.device_box.blockSignals(False)

    @property
    def device(self) -> str:
        return self.device_box.currentText() or "auto"

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        value = item.data(0, _PATH)
        if value and value != self._current:
            self.model_requested.emit(str(value))


def score_only(metric: str) -> str:
    """The figure that ends a held-out metric in words ("accuracy 98.6%" -> "98.6%"), for a list too narrow
    for the words (the row's tooltip keeps them); the words themselves when no figure ends them."""
    m = re.search(r"(-?[\d.]+\s*%?)\s*$", metric)
    return m.group(1).strip() if m else metric


def _listed_name(name_or_dir, names: list[str]):
    """``name_or_dir`` if it is a listed name; else the listed bundled model whose folder it is (or None)."""
    if not name_or_dir or name_or_dir in names:
        return name_or_dir
    from attnviz.io import assets_dir

    try:
        folder = Path(name_or_dir).expanduser().resolve()
        models = (assets_dir() / "models").resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return folder.name if folder.parent == models and folder.name in names else None
