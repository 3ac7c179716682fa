"""Input panel: a sentence (re-run live while typing) or an image, and the token strip.

Typing is debounced: the first key after a pause runs the model at once (so one edit is seen
immediately), further keys within ``DEBOUNCE_MS`` are folded into one run when typing pauses.
The run itself happens in a worker; this panel only emits the text.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetrics, QTextOption
from PySide6.QtWidgets import (QBoxLayout, QComboBox, QLabel, QPlainTextEdit, QSizePolicy, QStackedWidget, QVBoxLayout,
                               QWidget)

from attnviz.gui.panels.image_input import ImageInput
from attnviz.gui.panels.input_tokens import TokenStrip
from attnviz.text.token_strip import StripData
from attnviz.gui.panels.target_input import TargetRow

__all__ = ["InputPanel", "SentenceEdit", "DEBOUNCE_MS"]

DEBOUNCE_MS = 150


STRIP_TIP = ("How the model reads the text: each token and its vocabulary ID (BPE models also show the merges "
             "that built the token). Click a token to select it as the query.")

class SentenceEdit(QPlainTextEdit):
    """A few lines of plain text; Enter runs immediately instead of inserting a line break."""

    submit_now = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setTabChangesFocus(True)
        self.setPlaceholderText("Type a sentence…")
        self._fit_height()

    lines = 3  # one in the compact window (a 1280×720 projector: the head map needs the height)

    def set_lines(self, lines: int) -> None:
        self.lines = lines
        self._fit_height()

    def _fit_height(self) -> None:
        lines = self.lines
        fm = QFontMetrics(self.font())
        self.setFixedHeight(int(fm.lineSpacing() * lines + 2 * self.frameWidth() + 10))

    def changeEvent(self, ev) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(ev)
        if ev.type() == QEvent.Type.FontChange:
            self._fit_height()

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            self.submit_now.emit()
            return
        super().keyPressEvent(event)


class InputPanel(QWidget):
    """Text or image input plus the token strip.

    Signals
    -------
    text_submitted(str) : the (debounced) text to run.
    image_submitted(object) : an image path or array to run.
    token_clicked(int) : a token of the strip was clicked (select it as the query).
    """

    text_submitted = Signal(str)
    image_submitted = Signal(object)
    token_clicked = Signal(int)
    notice = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.edit = SentenceEdit(self)
        self.edit.setToolTip("The model re-runs as you type")
        self.edit.textChanged.connect(self._typed)
        self.edit.submit_now.connect(self.flush)
        self.examples_box = QComboBox(self)  # the loaded model's task examples
        self.examples_box.setPlaceholderText("Examples of this model's task…")
        self.examples_box.setToolTip("Run the model on one of its task's example sentences")
        self.examples_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.examples_box.activated.connect(self._example_chosen)
        self.image = ImageInput(self)
        self.image.image_submitted.connect(self.image_submitted)
        self.image.notice.connect(self.notice)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.edit)
        self.stack.addWidget(self.image)
        self.target_row = TargetRow(self)  # encoder–decoders only: what the decoder reads
        self.target_row.changed.connect(self._target_typed)
        self.target_row.submit_now.connect(self.flush)
        self.target_row.setVisible(False)
        self._strip_title = "tokens · IDs"  # the strip's title without the highlight's note
        self.strip_label = QLabel(self._strip_title, self)
        self.strip_label.setToolTip(STRIP_TIP)
        # its note on the highlight (set_query) is as long as the dock is wide: never a reason to widen it
        self.strip_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.strip = TokenStrip(self)
        self.strip.token_clicked.connect(self.token_clicked)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.examples_box)
        # the sentence and an encoder–decoder's target: one above the other, side by side when compact (one
        # line: translate's dock was two lines, 78 px, at 1280×720)
        self.line = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self.line.addWidget(self.stack, 1)
        self.line.addWidget(self.target_row, 1)
        lay.addLayout(self.line)
        lay.addWidget(self.strip_label)
        lay.addWidget(self.strip)
        lay.addStretch(1)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._trailing)
        self._since_last = QElapsedTimer()
        self._sent = None  # last text emitted, so the trailing edge does not repeat the leading one
        self.enabled_runs = True
        self.compact = False  # set_compact: one line tall on a small screen
        self.set_mode("text")

    def set_compact(self, on: bool) -> None:
        """One line tall (a small screen: the sentence only; the head map's axes name the tokens), or
        the full panel."""
        self.compact = on
        self.edit.set_lines(1 if on else 3)
        self.line.setDirection(QBoxLayout.Direction.LeftToRight if on else QBoxLayout.Direction.TopToBottom)
        self.image.set_compact(on)
        self._show_parts()

    # -- mode ------------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return "image" if self.stack.currentWidget() is self.image else "text"

    def set_mode(self, mode: str) -> None:
        """"text" for text models, "image" for vision models."""
        self.stack.setCurrentWidget(self.image if mode == "image" else self.edit)
        self._show_parts()

    def _show_parts(self) -> None:
        """The strip and examples for text models, unless the window is compact."""
        text = self.mode == "text"
        self.stack.setFixedHeight(self.edit.height() if text else self.stack.currentWidget().sizeHint().height())
        for w in (self.strip, self.strip_label):
            w.setVisible(text and not self.compact)
        self.examples_box.setVisible(text and not self.compact and self.examples_box.count() > 0)

    def set_examples(self, examples: list[str]) -> None:
        """The example sentences the picker lists (those of the loaded model's task)."""
        self.examples_box.clear()
        self.examples_box.addItems([str(e) for e in examples])
        self.examples_box.setCurrentIndex(-1)  # the placeholder: nothing picked yet
        self._show_parts()

    @property
    def examples(self) -> list[str]:
        return [self.examples_box.itemText(i) for i in range(self.examples_box.count())]

    def _example_chosen(self, index: int) -> None:
        if 0 <= index < self.examples_box.count():
            self.set_text(self.examples_box.itemText(index), submit=True)

    # -- text --------------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self.edit.toPlainText()

    @property
    def target(self) -> str | None:
        """What an encoder–decoder's decoder should read; None: the model's own output."""
        return self.target_row.target

    def set_target_visible(self, visible: bool) -> None:
        """Show the target field (encoder–decoders); hiding it also empties it (another model's output)."""
        if not visible:
            self.target_row.set_target("")
        self.target_row.setVisible(visible and self.mode == "text")

    def _target_typed(self) -> None:
        self._sent = None  # same sentence, new target: it must run again
        self._typed()

    def open_text_dialog(self) -> None:
        """File ▸ Open text…: choose a UTF-8 file whose whole text becomes the input (a long document)."""
        from PySide6.QtWidgets import QFileDialog

        from attnviz.text.text_file import MAX_TEXT_FILE_BYTES

        caption = f"Open text (UTF-8, at most {MAX_TEXT_FILE_BYTES // (1024 * 1024)} MB)"  # the bound, said before
        path, _ = QFileDialog.getOpenFileName(self, caption, "", "Text files (*.txt *.md);;All files (*)")
        if path:
            self.open_text_file(path)

    def open_image_dialog(self) -> None:
        """File ▸ Open image…: choose an image for a vision model; a text model says so before the dialog
        (it opened the dialog and refused the chosen image only after)."""
        if self.mode != "image":
            self.notice.emit("this model reads text: open an image with a vision model")
            return
        self.image.open_dialog()

    def open_text_file(self, path: str) -> bool:
        """Put the text of ``path`` in the input and run it; a file that is not text is a visible notice."""
        from attnviz.errors import InputError
        from attnviz.text.text_file import read_text_file

        if self.mode != "text":
            self.notice.emit("this model reads images: open a text file with a text model")
            return False
        try:
            text = read_text_file(path)  # bounded (8 MB): a short read, fine on the GUI thread
        except InputError as exc:
            self.notice.emit(str(exc))
            return False
        # shown from its first line: a long file is cut to the model's positions from the start, and the box
        # scrolled to the end showed the part of a 17,000-token text the model never read
        self.set_text(text, submit=True, at_start=True)
        return True

    def set_text(self, text: str, submit: bool = True, at_start: bool = False) -> None:
        """Replace the text; emit it at once when ``submit`` (no debounce: this is not typing). The cursor
        goes to the end (Step appends there) or, ``at_start``, to the first line."""
        self.edit.blockSignals(True)
        self.edit.setPlainText(text)
        self.edit.blockSignals(False)
        cursor = self.edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.Start if at_start else cursor.MoveOperation.End)
        self.edit.setTextCursor(cursor)
        if submit:
            self.flush()

    def append_token(self, token: str, tokenizer_kind: str) -> None:
        """Add a generated token to the text (Step): characters join directly, words with a space."""
        text = self.text
        if tokenizer_kind == "word" and text and not text.endswith(" ") and token.isalnum():
            text += " "
        self.set_text(text + token, submit=True)

    def _typed(self) -> None:
        if not self.enabled_runs:
            return
        idle = not self._since_last.isValid() or self._since_last.elapsed() >= DEBOUNCE_MS
        self._since_last.restart()
        if idle and not self._timer.isActive():
            self._emit(self.text)  # leading edge: one edit after a pause is shown at once
        self._timer.start()  # trailing edge: the rest once typing pauses

    def _trailing(self) -> None:
        self._emit(self.text)

    def flush(self) -> None:
        """Emit the current text now (Enter, Step, a new model)."""
        self._timer.stop()
        self._sent = None
        self._emit(self.text)

    def _emit(self, text: str) -> None:
        if text == self._sent:
            return
        self._sent = text
        self.text_submitted.emit(text)

    # -- strip -------------------------------------------------------------------------------------------
    def set_strip(self, data: StripData) -> None:
        self._strip_title = f"{data.title} · IDs" + (" · BPE merges" if any(data.merges) else "")
        self.strip_label.setText(self._strip_title)
        self.strip.set_data(data)

    def clear_strip(self) -> None:
        """No tokens (nothing is shown for the current input)."""
        self.set_strip(StripData([], [], title="tokens"))

    def set_query(self, index: int | None, why: str = "") -> None:
        """Highlight token ``index``; ``why``: what it is when not the selected query (said after the title)."""
        self.strip.strip.set_selected(index)
        self.strip_label.setText(self._strip_title + (f" · {why}" if why else ""))
        self.strip_label.setToolTip(STRIP_TIP + (f"\n\n{why}" if why else ""))
