"""Which attention of an encoder–decoder the views show: decoder self, cross (decoder → encoder), encoder self.

A tool bar over the attention views, shown only for traces that have more than one kind of attention.
It writes ``Selection.part``; every view and the walkthrough read it from there.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QButtonGroup, QLabel, QToolBar, QToolButton

__all__ = ["PartBar", "PARTS", "available_parts", "model_parts", "opening_part"]

# (selection value, button text, tooltip)
PARTS = (
    ("enc", "encoder self-attention", "How the source tokens attend to each other (encoder layers)"),
    ("cross", "cross-attention: decoder → encoder",
     "Where each output token looks in the source: the alignment a translation model learns"),
    ("self", "decoder self-attention", "How each output token attends to the output before it (causal)"),
)


def available_parts(trace) -> list[str]:
    """The parts ``trace`` holds, in reading order (encoder, cross, decoder)."""
    if trace is None:
        return []
    have = {"enc": bool(trace.n_enc_layers), "cross": bool(trace.has_cross), "self": True}
    return [p for p, _, _ in PARTS if have[p]]


def model_parts(config) -> list[str]:
    """The parts a loaded model's traces will hold (its ModelConfig): an encoder–decoder's three, else one."""
    return [p for p, _, _ in PARTS] if config.kind == "encoder-decoder" else ["self"]


def opening_part(config, kept: dict | None = None) -> str:
    """The part a loaded model's first trace opens on (:func:`attnviz.gui.panels.trace_defaults.trace_defaults`):
    where this model was left (``kept``) when it has that part, else the one default rule's, cross-attention when
    there is one (:func:`attnviz.analysis.walkthrough_default.default_part`)."""
    parts = model_parts(config)
    if kept and kept.get("part") in parts:
        return kept["part"]
    return "cross" if "cross" in parts else "self"


class PartBar(QToolBar):
    """Exclusive buttons for the attention parts of the current trace; hidden when there is only one."""

    def __init__(self, selection, parent=None):
        super().__init__("Attention part", parent)
        self.setObjectName("PartBar")  # saved with the window layout
        self.setMovable(False)
        self.selection = selection
        self.addWidget(QLabel(" Show: "))
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.buttons: dict[str, QToolButton] = {}
        for part, text, tip in PARTS:
            button = QToolButton(self)
            button.setText(text)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            self.group.addButton(button)
            self.addWidget(button)
            button.clicked.connect(lambda _checked=False, p=part: self._clicked(p))
            self.buttons[part] = button
        selection.connect(self._selection_changed)
        self._parts: list[str] = []
        self._opening: str | None = None  # the part a loaded model's first trace will open on, until it comes
        self.setVisible(False)

    def set_trace(self, trace) -> None:
        self._opening = None  # the trace's defaults are in the selection now
        self.set_parts(available_parts(trace))

    def set_model(self, config, part: str | None = None) -> None:
        """A model just loaded, before its first trace: its parts, never the previous model's (issue 36:
        shapes, loaded and not run yet, still showed translate's "Show: encoder self-attention | …" row),
        with ``part`` (:func:`opening_part`) checked: the part its first trace opens on (translate showed
        "decoder self-attention", the previous model's part, until its first run moved it to cross-attention)."""
        self._opening = part
        self.set_parts(model_parts(config))

    def _clicked(self, part: str) -> None:
        self._opening = None  # the user's choice, not the opening part
        self.selection.update(part=part)
        self._check(self.selection.part)

    def set_parts(self, parts: list[str]) -> None:
        if parts != self._parts:
            self._parts = parts
            for part, button in self.buttons.items():
                # QToolBar hides widgets through their actions, not the widgets themselves
                self._action_of(button).setVisible(part in parts)
            self._check(self.selection.part)  # before the row shows: never a moment on the last model's part
            self.setVisible(len(parts) > 1)
        self._check(self.selection.part)

    def _action_of(self, button):
        return next(a for a in self.actions() if self.widgetForAction(a) is button)

    def _selection_changed(self, state, changed) -> None:
        if "part" in changed:
            self._check(state.part)

    def _check(self, part: str) -> None:
        # the part the views fall back to when the selection names one this trace lacks
        part = self._opening or part
        shown = part if part in self._parts else "self"
        button = self.buttons.get(shown)
        if button is not None and not button.isChecked():
            button.setChecked(True)
