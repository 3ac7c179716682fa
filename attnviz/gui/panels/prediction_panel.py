"""Prediction panel: class probabilities, a decoder's next-token distribution (with Step), a translation."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

__all__ = ["PredictionPanel", "ProbabilityBars", "top_entries", "finite_entries", "NONFINITE_NOTE"]

TOP_K = 10
MIN_ROWS = 3  # the fewest bars a squeezed panel keeps before its other rows are "… more"
SCREEN_SHARE = 0.25  # of the screen's height: the most the bars claim as their minimum


def top_entries(probs, labels: list[str], k: int = TOP_K) -> list[tuple[int, str, float]]:
    """The ``k`` most probable (index, label, probability), most probable first.

    Rows that hold no token (an embedding padded past the vocabulary, labelled ``[row N]``) are left out: no
    text can produce them, and a random model's top ten were such rows at 0.0 %.
    """
    import numpy as np

    from attnviz.gui.panels.input_tokens import shown_token
    from attnviz.text.vocab_rows import is_no_token_label

    p = np.asarray(probs, dtype=np.float64).ravel()
    padded = [i for i, label in enumerate(labels) if label[:5] == "[row " and is_no_token_label(label, i)]
    if padded:  # rank without them: -inf sorts last (and NaN keeps the full sort below)
        p = p.copy()
        p[[i for i in padded if i < p.size]] = -np.inf
        k = min(k, p.size - len(padded))
    if 0 < k < p.size and not np.isnan(p).any():
        # the same k as a full stable sort (ties to the lower index) without sorting a 30k vocabulary:
        # everything at or above the k-th largest value, in index order, sorted stably
        kth = np.partition(p, p.size - k)[p.size - k]
        candidates = np.flatnonzero(p >= kth)
        order = candidates[np.argsort(-p[candidates], kind="stable")][:k]
    else:
        order = np.argsort(-p, kind="stable")[:max(k, 0)]
    return [(int(i), shown_token(labels[i]) if i < len(labels) else str(int(i)), float(p[i])) for i in order]


def min_rows(n: int, screen_height: int, row_h: int) -> int:
    """The rows the bars claim as their minimum height: every one of ``n`` while they take at most
    ``SCREEN_SHARE`` of the screen (1920×1080: all ten), else fewer (1280×720: the dock cut the last row
    in half and a decoder's Step button off), never under ``MIN_ROWS``; one for the empty line."""
    return max(1, min(n, max(MIN_ROWS, int(screen_height * SCREEN_SHARE) // max(1, row_h))))


def percent(prob: float) -> str:
    """A probability as the panel prints it: one decimal, or two significant digits below 0.1 % (a random
    model's best guess over 50,000 tokens is 0.004 %, not "0.0%")."""
    pct = 100.0 * prob
    return f"{pct:.1f}%" if pct >= 0.05 or pct <= 0 else f"{pct:.2g}%"


# what the panel says instead of bars when the model's output is not a number (a NaN weight, an overflow)
NONFINITE_NOTE = ("the model's output here is not a number (NaN or ∞: non-finite weights or an overflow), so "
                  "there are no probabilities to rank")


def finite_entries(probs, names: list[str], k: int = TOP_K):
    """:func:`top_entries` of ``probs``, or None when any probability is NaN or infinite (nothing to rank)."""
    import numpy as np

    p = np.asarray(probs)
    if not np.isfinite(p).all():
        return None
    return top_entries(p, names, k)


def _top_of_row(trace, q: int, names: list[str]):
    """On a worker: the top entries of row ``q`` of a trace's prediction, None when it is not finite (an
    exception is returned)."""
    try:
        return finite_entries(trace.row("prediction", q), names)
    except Exception as exc:  # noqa: BLE001 - shown in the panel's title, never raised into Qt
        return exc


class ProbabilityBars(QWidget):
    """Horizontal bars: label · bar · percentage. Clicking a row chooses it (``row_clicked``)."""

    row_clicked = Signal(int)  # index into the distribution

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[tuple[int, str, float]] = []
        self.chosen: int | None = None
        # may be shorter than every row (a 1280×720 window cut the last row in half and the Step button
        # off): it then draws the rows that fit whole and says how many more there are
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_entries(self, entries: list[tuple[int, str, float]], chosen: int | None = None) -> None:
        self.entries = entries
        self.chosen = chosen
        self.updateGeometry()
        self.update()

    def _row_h(self) -> int:
        return QFontMetrics(self.font()).height() + 6

    def sizeHint(self) -> QSize:
        return QSize(220, max(1, len(self.entries)) * self._row_h() + 4)

    def minimumSizeHint(self) -> QSize:
        # the dock split is fixed when the window lays out (with the panel still empty) and grows a dock
        # only to its contents' minimum: a minimum of every row keeps them all where the screen has room
        return QSize(220, min_rows(len(self.entries), self.screen_height(), self._row_h()) * self._row_h() + 4)

    def screen_height(self) -> int:
        screen = self.screen()
        return screen.availableGeometry().height() if screen is not None else 1080

    def rows_shown(self) -> int:
        """How many rows are drawn whole at the current height (the rest are named by a '… more' line)."""
        fit = max(0, (self.height() - 4) // self._row_h())
        return len(self.entries) if fit >= len(self.entries) else max(0, fit - 1)

    def more_text(self) -> str:
        """The line under the drawn rows when some do not fit ('' when all do)."""
        hidden = len(self.entries) - self.rows_shown()
        return f"… {hidden} more (make this panel taller)" if hidden > 0 else ""

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        pal = self.palette()
        fm = QFontMetrics(self.font())
        rh = self._row_h()
        shown = self.rows_shown()
        label_w = min(max((fm.horizontalAdvance(e[1]) for e in self.entries), default=0) + 8, self.width() // 2)
        pct_w = max(fm.horizontalAdvance(t) for t in ("100.0%", "0.0099%")) + 6
        bar_w = max(self.width() - label_w - pct_w - 8, 10)
        bar = pal.color(QPalette.ColorRole.Highlight)
        for row, (idx, label, prob) in enumerate(self.entries[:shown]):
            y = 2 + row * rh
            p.setPen(pal.color(QPalette.ColorRole.Text))
            p.drawText(QRectF(0, y, label_w - 6, rh), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       fm.elidedText(label, Qt.TextElideMode.ElideRight, label_w - 6))
            p.fillRect(QRectF(label_w, y + 3, bar_w, rh - 6), pal.color(QPalette.ColorRole.AlternateBase))
            colour = QColor(bar) if idx == self.chosen or self.chosen is None else QColor(bar).lighter(140)
            p.fillRect(QRectF(label_w, y + 3, bar_w * max(0.0, min(prob, 1.0)), rh - 6), colour)
            p.drawText(QRectF(label_w + bar_w + 4, y, pct_w, rh), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       percent(prob))
        if self.more_text():
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.drawText(QRectF(0, 2 + shown * rh, self.width(), rh), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       self.more_text())
        p.end()

    def mousePressEvent(self, event) -> None:
        row = int((event.position().y() - 2) // self._row_h())
        if 0 <= row < self.rows_shown():
            self.row_clicked.emit(self.entries[row][0])


class PredictionPanel(QWidget):
    """Shows ``trace["prediction"]`` with labels; ``step_requested(token)`` appends a decoder's choice."""

    step_requested = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = QLabel("Prediction", self)
        self.title.setWordWrap(True)
        self.output = QLabel("", self)
        self.output.setWordWrap(True)
        self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.output.font()
        f.setPointSizeF(f.pointSizeF() * 1.4)
        self.output.setFont(f)
        self.output.setToolTip("The model's decoded output (greedy)")
        self.bars = ProbabilityBars(self)
        self.bars.row_clicked.connect(self._choose)
        self.step_button = QPushButton("Step ▶", self)
        self.step_button.setToolTip("Append the chosen next token to the text and run again (Ctrl+Return). "
                                    "Click a bar to choose another token.")
        self.step_button.clicked.connect(self.step)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.step_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.title)
        lay.addWidget(self.output)
        lay.addWidget(self.bars)
        lay.addLayout(row)
        lay.addStretch(1)
        self.vocab: list[str] = []
        self.vocab_of: str | None = None  # the model whose output vocabulary ``vocab`` is
        self.mode = "none"
        self.chosen: int | None = None
        self._trace = None
        self._query: int | None = None
        self._row_job = None  # the lane job computing a deferred row, until it is shown
        self.clear()

    def clear(self, reason: str | None = None) -> None:
        """Show no prediction; ``reason`` says why (a refused input) instead of asking for a run."""
        self._cancel_row()
        self.mode = "none"
        self._trace = None
        self.title.setText(f"Prediction: nothing shown — {reason}" if reason else "Prediction: run a model")
        self.output.hide()
        self.bars.set_entries([])
        self.step_button.hide()

    def set_vocab(self, vocab: list[str], model_name: str | None = None) -> None:
        """Output vocabulary of the loaded model ``model_name`` (labels of a next-token distribution)."""
        self.vocab = list(vocab)
        self.vocab_of = model_name

    def _names(self, trace, size: int, labels: list[str], labels_first: bool = False) -> list[str]:
        """Labels of a distribution over ``size`` outputs: the trace's own labels or the loaded model's
        vocabulary, the latter only for a trace of that model (a saved trace of another model with a
        vocabulary of the same size would otherwise be named in words its model never had); else none,
        and the bars name IDs."""
        own = len(labels) == size
        vocab_fits = len(self.vocab) == size and self.vocab_of in (None, trace.description.model_name)
        if labels_first and own:
            return labels
        return self.vocab if vocab_fits else (labels if own else [])

    def set_query(self, query: int | None) -> None:
        """Per-token predictions follow the selected query token."""
        self._query = query
        if self._trace is not None and self.mode in ("per-token", "decoder-position"):
            self.set_trace(self._trace)

    def set_trace(self, trace, empty_reason: str | None = None) -> None:
        """Show the prediction held by ``trace``; None clears the panel (saying ``empty_reason`` when given)."""
        if trace is None:
            self.clear(empty_reason)
            return
        self._trace = trace
        self._cancel_row()  # a row of the previous trace or query still on its way is not shown
        if "prediction" not in trace:
            self.clear()
            return
        shape = trace.shape("prediction")  # a Hugging Face MLM's (T, V) is computed per row when shown
        labels = trace.description.labels or []
        kind = trace.kind
        out_text = trace.description.output_text
        self.output.setVisible(bool(out_text))
        given = trace.description.decoder_input == "target"  # a typed target is not what the model wrote
        self.output.setText((f"decoder reads (given): {out_text}" if given else f"→ {out_text}") if out_text else "")
        if kind == "encoder-decoder":
            self._show_decoder_position(trace, trace["prediction"], labels)
            return
        if kind == "decoder":
            self.mode = "next-token"
            pred = trace["prediction"]
            names = self._names(trace, pred.shape[-1], labels)
            entries = finite_entries(pred, names)
            if entries is None:
                self._not_finite("Next token")
                return
            self.chosen = entries[0][0] if entries else None
            self.title.setText("Next token (top 10)" if kind == "decoder" else
                               "Translation; next-token distribution after it")
            self.bars.set_entries(entries, self.chosen)
            self.step_button.setVisible(kind == "decoder")
            self._update_step()
            return
        self.step_button.hide()
        self.chosen = None
        if len(shape) == 2:  # (T, C): one distribution per token
            self.mode = "per-token"
            q = self._query if self._query is not None and self._query < shape[0] else 0
            names = self._names(trace, shape[1], labels, labels_first=True)
            self._show_row(trace, q, names)
            return
        self.mode = "classes"
        pred = trace["prediction"]
        names = labels if len(labels) == pred.shape[0] else [f"class {i}" for i in range(pred.shape[0])]
        few = len(names) <= TOP_K + 2  # a handful of classes: show them all, in order of probability
        entries = finite_entries(pred, names, k=len(names) if few else TOP_K)
        if entries is None:
            self._not_finite("Class probabilities")
            return
        self.title.setText("Class probabilities" if few else f"Class probabilities (top {TOP_K} of {len(names)})")
        self.bars.set_entries(entries)

    def _not_finite(self, what: str) -> None:
        """A clear notice instead of bars of "nan%" (a model with a NaN weight computes NaN everywhere)."""
        self.chosen = None
        self.title.setText(f"{what}: {NONFINITE_NOTE}")
        self.bars.set_entries([])
        self.step_button.hide()

    def _show_row(self, trace, q: int, names: list[str]) -> None:
        """Per-token predictions: the bars of row ``q``. A deferred row (a Hugging Face MLM's: one
        30,522-word projection of BERT-base, ~11 ms) is computed on a worker while this thread
        draws the views; title and bars change together when it comes (until then the panel shows what
        it showed, as while the model ran). A hidden panel computes it at once."""
        title = f"Prediction for token {q} “{trace.tokens[q]}” (click a token to choose)"
        deferred = "prediction" not in trace.arrays and "prediction" in trace.deferred
        if not deferred or not self.isVisible():
            entries = finite_entries(trace.row("prediction", q), names)
            if entries is None:
                self._not_finite(f"Prediction for token {q}")
                return
            self.title.setText(title)
            self.bars.set_entries(entries)
            return

        def shown(result) -> None:
            self._row_job = None
            if self._trace is not trace:
                return
            if isinstance(result, Exception):
                self.title.setText(f"Prediction for token {q} unavailable: {result}")
                self.bars.set_entries([])
                return
            if result is None:
                self._not_finite(f"Prediction for token {q}")
                return
            self.title.setText(title)
            self.bars.set_entries(result)

        # not the views' lane: there the All heads statistics (~35 ms for BERT-base) run at the same
        # time, and the row would wait for them
        from attnviz.gui.workers import background_lane

        self._row_job = background_lane().submit(("prediction-row", id(self)), _top_of_row, trace, q, names,
                                                 on_result=shown, owner=self)

    def _cancel_row(self) -> None:
        if self._row_job is not None:
            self._row_job.lane.cancel(self._row_job.kind)  # a row still on its way is dropped
            self._row_job = None

    @property
    def background_pending(self) -> bool:
        """True while a row computed on the views' worker has not been shown yet."""
        return self._row_job is not None

    def _show_decoder_position(self, trace, pred, labels) -> None:
        """Encoder–decoders: the distribution after the selected decoder position (when none is selected, the
        last one that wrote a word, where the walkthrough and What if open: see ``position_distribution``), titled
        with the token that position read and the one it produced."""
        from attnviz.analysis.decoder_positions import END, position_distribution, produced_tokens
        from attnviz.gui.panels.input_tokens import shown_token

        self.mode = "decoder-position"
        self.step_button.hide()
        at = position_distribution(trace, self._query)
        row, pos = at if at is not None else (pred, len(trace.tokens) - 1)
        names = self._names(trace, row.shape[-1], labels)
        entries = finite_entries(row, names)
        if entries is None:
            self._not_finite(f"After decoder token {pos}")
            return
        made = produced_tokens(trace)[pos]
        self.chosen = None
        self.title.setText(f"After decoder token {pos} “{shown_token(str(trace.tokens[pos]))}” → "
                           f"{shown_token(made) if made is not None else END + ': decoding stopped, nothing written'}"
                           " (click a token to choose)")
        self.bars.set_entries(entries)

    def _choose(self, index: int) -> None:
        if self.mode == "next-token":
            self.chosen = index
            self.bars.set_entries(self.bars.entries, index)
            self._update_step()

    def _update_step(self) -> None:
        from attnviz.gui.panels.input_tokens import shown_token

        token = self.chosen_token()
        self.step_button.setText(f"Step ▶ append “{shown_token(token)}”" if token is not None else "Step ▶")
        self.step_button.setEnabled(token is not None)  # nothing to append: another model's trace, no choice

    def chosen_token(self) -> str | None:
        if self.chosen is None:
            return None
        if self._trace is None or self.vocab_of not in (None, self._trace.description.model_name):
            return None  # another model's saved trace: the loaded model cannot append its token
        return self.vocab[self.chosen] if self.chosen < len(self.vocab) else None

    def step(self) -> None:
        """Append the chosen next token (decoders)."""
        token = self.chosen_token()
        if self.mode == "next-token" and token is not None and self.step_button.isVisible():
            self.step_requested.emit(token)
