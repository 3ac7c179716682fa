"""The target field of an encoder–decoder: the output its decoder reads instead of its own greedy output.

Shown only for encoder–decoders (the bundled ``translate``, Hugging Face T5, BART, Marian, …). Empty means
the model's own greedy output, which is what it shows by default; typing re-runs the model like the
sentence box does (same debounce, in :class:`attnviz.gui.panels.input_panel.InputPanel`).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

__all__ = ["TargetRow"]


class TargetRow(QWidget):
    """A label and a one-line edit; ``changed`` when the text changes (the panel debounces the run)."""

    changed = Signal()
    submit_now = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel("Decoder reads:", self)
        self.edit = QLineEdit(self)
        self.edit.setObjectName("TargetEdit")
        self.edit.setPlaceholderText("the model's own output (greedy) — or type the output it should read")
        self.edit.setClearButtonEnabled(True)
        tip = ("The output text the decoder reads, one position per token: position i reads token i and "
               "produces token i + 1. Leave it empty to trace the model's own greedy output.")
        self.edit.setToolTip(tip)
        self.label.setToolTip(tip)
        self.edit.textChanged.connect(self.changed)
        self.edit.returnPressed.connect(self.submit_now)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.edit, 1)

    @property
    def target(self) -> str | None:
        """The typed target, or None (empty or hidden: the model's own output)."""
        text = self.edit.text()
        return text if self.isVisibleTo(self.parentWidget()) and text.strip() else None

    def set_target(self, text: str) -> None:
        self.edit.blockSignals(True)
        self.edit.setText(text)
        self.edit.blockSignals(False)
