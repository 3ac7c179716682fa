"""The What-if switches: made once, laid out beside the figure or in a wrapping bar above it.

Beside the figure they took 340 px of a 1280×720 window's ~970 px Walkthrough tab: the two attention maps got
~600 px between them and drew ~130 px cells with ~10 px token labels. Narrower than :data:`NARROW_PX`, the
switches move into a bar above the figure (a flow of groups, two or three lines) and the maps get the whole
width; wider, they stay in their column beside it. The same widgets move, so a switch keeps its state.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QBoxLayout, QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton,
                               QSlider, QSpinBox, QVBoxLayout, QWidget)

from attnviz.gui.widgets.flow_row import FlowRow

__all__ = ["NARROW_PX", "build_switches", "SwitchGroups", "SwitchesPlacement", "arrange_heads", "layers_per_row"]

# the panel's width below which the switches go above the figure: the side column (340) and two maps with
# ~250 px cells, every token named, side by side (~2 × 330 + the gap) do not fit beside each other
NARROW_PX = 1100
HEADS_CAPTION = "Ablate heads (tick to zero a head's output):"


def heads_caption(narrow: bool, part: str = "") -> str:
    """The ablation boxes' caption; ``part`` names the stack they switch off where a model has two ("decoder
    self-attention": translate's boxes zero decoder self-attention heads, not the cross-attention the walkthrough
    and the Attention tab stand on, and said only "Ablate heads")."""
    if not part:
        return "Ablate heads:" if narrow else HEADS_CAPTION
    return f"Ablate {part} heads:" if narrow else f"Ablate {part} heads (tick to zero a head's output):"


def arrange_heads(panel, per_row: int) -> None:
    """The ablation boxes, ``per_row`` layers a line ("L0 h0 h1  L1 h0 h1"): in the bar above the figure a layer a
    line made it as many lines tall as the model has layers (shapes: three), height the maps need."""
    grid, checks = panel.heads_grid, panel.head_checks
    if not panel.layer_labels:
        return
    heads = len(checks) // len(panel.layer_labels)
    for layer, label in enumerate(panel.layer_labels):
        row, col = divmod(layer, max(1, per_row))
        grid.addWidget(label, row, col * (heads + 1))  # (re-adding moves a widget already in the grid)
        for h in range(heads):
            grid.addWidget(checks[(layer, h)], row, col * (heads + 1) + 1 + h)


def layers_per_row(panel, width: int) -> int:
    """How many layers' boxes fit side by side in ``width`` px (at least one)."""
    if not panel.layer_labels:
        return 1
    heads = len(panel.head_checks) // len(panel.layer_labels)
    cell = max(b.sizeHint().width() for b in panel.head_checks.values()) + panel.heads_grid.horizontalSpacing() + 2
    label = panel.layer_labels[0].sizeHint().width() + panel.heads_grid.horizontalSpacing() + 12
    return max(1, min(len(panel.layer_labels), width // max(1, label + heads * cell)))


def _group(*widgets, stretch_first: bool = False) -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(6)
    for i, w in enumerate(widgets):
        row.addWidget(w, 1 if (stretch_first and i == 1) else 0)
    return box


def build_switches(panel) -> list[QWidget]:
    """Make the switch widgets as attributes of ``panel`` (``scale_box``, ``temp_slider``, ``causal_box``, …)
    and return them as groups that are placed together (a caption stays with its control)."""
    panel.scale_box = QComboBox()
    panel.scale_box.addItem("× 1/√d_k (as trained)", "model")
    panel.scale_box.addItem("none (× 1)", "none")
    panel.temp_slider = QSlider(Qt.Horizontal)
    panel.temp_slider.setRange(-20, 20)  # temperature 10^(v/20): 0.1 … 10
    panel.temp_slider.setMinimumWidth(110)
    panel.temp_label = QLabel("T = 1")
    panel.temp_label.setMinimumWidth(panel.temp_label.fontMetrics().horizontalAdvance("T = 0.112"))
    panel.causal_box = QCheckBox("causal mask")
    panel.pos_box = QCheckBox("positional encoding")
    panel.heads_box = QWidget()
    panel.heads_grid = QGridLayout(panel.heads_box)
    panel.heads_grid.setContentsMargins(0, 0, 0, 0)
    panel.head_checks = {}
    panel.layer_labels = []
    heads = QWidget()
    hv = QBoxLayout(QBoxLayout.Direction.TopToBottom, heads)
    hv.setContentsMargins(0, 0, 0, 0)
    panel.heads_caption = QLabel(HEADS_CAPTION)
    panel.heads_caption.setToolTip("tick to zero a head's output")
    hv.addWidget(panel.heads_caption)
    hv.addWidget(panel.heads_box)
    panel.heads_row = hv
    panel.reset_button = QPushButton("Reset all switches")
    panel.permute_button = QPushButton("Permute tokens")
    panel.permute_button.setToolTip("shuffle the input tokens and compare the attention with R·P·Rᵀ "
                                    "(uses the switches above: try positional encoding off)")
    panel.perm_seed = QSpinBox()
    panel.perm_seed.setRange(0, 9999)
    panel.perm_seed.setPrefix("shuffle ")
    panel.state_label = QLabel("")
    panel.state_label.setWordWrap(True)
    return [_group(QLabel("Scale"), panel.scale_box, stretch_first=True),
            _group(QLabel("Temperature"), panel.temp_slider, panel.temp_label, stretch_first=True),
            panel.causal_box, panel.pos_box, heads, panel.reset_button,
            _group(panel.permute_button, panel.perm_seed), panel.state_label]


class SwitchGroups:
    """The switch groups as one: greyed and given the reason together (a model the switches cannot act on),
    wherever they are placed."""

    def __init__(self, groups: list[QWidget]):
        self.groups = groups

    def setEnabled(self, on: bool) -> None:
        for g in self.groups:
            g.setEnabled(on)

    def isEnabled(self) -> bool:
        return all(g.isEnabled() for g in self.groups)

    def setToolTip(self, text: str) -> None:
        for g in self.groups:
            g.setToolTip(text)

    def toolTip(self) -> str:
        return self.groups[0].toolTip()


class SwitchesPlacement:
    """Holds the two places of the switch groups: ``side`` (a column, for a splitter beside the figure) and
    ``bar`` (a wrapping row above it). :meth:`place` moves the groups where the panel's width wants them."""

    def __init__(self, groups: list[QWidget], heads_caption: QLabel, heads_row: QBoxLayout):
        self.groups = groups
        self.heads_caption, self.heads_row = heads_caption, heads_row
        self.side = QWidget()
        self._column = QVBoxLayout(self.side)
        self._column.addStretch(1)
        self.bar = FlowRow(spacing=14)
        self.narrow: bool | None = None
        self.on_slide = False  # presented (F5): in the bar, whatever the width, and shown with the figure
        self.part = ""  # the stack the boxes switch off, named where a model has two (heads_caption)
        self.place(False)

    def panel_heads(self, narrow: bool) -> None:
        """The ablation group: caption over the boxes in the column; beside them, shorter, in the bar."""
        caption = self.heads_caption
        caption.setText(heads_caption(narrow, self.part))
        self.heads_row.setDirection(QBoxLayout.Direction.LeftToRight if narrow else QBoxLayout.Direction.TopToBottom)

    def place(self, narrow: bool) -> bool:
        """Put the groups in the bar (``narrow``) or the column; True when they moved."""
        if narrow == self.narrow:
            return False
        self.narrow = narrow
        for g in self.groups:
            g.setParent(None)
        self.panel_heads(narrow)
        if narrow:
            for g in self.groups:
                self.bar.add(g)
        else:
            for i, g in enumerate(self.groups):
                self._column.insertWidget(i, g)
        for g in self.groups:
            g.show()
        return True
