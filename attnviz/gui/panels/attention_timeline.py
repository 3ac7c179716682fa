"""The attention timeline: a slider over training snapshots, replaying how the probes' attention formed.

The snapshot of one probe at one step is turned into a small Trace (probabilities only), so the
timeline draws with the same head-map view as the Attention tab: what the lecture shows during the
replay looks exactly like the live view.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSizePolicy, QSlider, QSpinBox, QVBoxLayout,
                               QWidget)

from attnviz.capture.description import TraceDescription
from attnviz.capture.finish import finish_trace
from attnviz.capture.trace import Trace, layer_prefix
from attnviz.gui.widgets.flow_row import FlowRow
from attnviz.selection import Selection

__all__ = ["AttentionTimeline", "snapshot_trace"]

PROBE_TIP = "Probe input whose attention was recorded during training"


def snapshot_trace(snaps, k: int, probe: int, causal: bool = False) -> Trace:
    """A Trace holding the attention probabilities of probe ``probe`` at snapshot ``k``.

    Parameters
    ----------
    snaps : :class:`attnviz.training.snapshots.Snapshots`
    causal : bool
        The model is a decoder: add its causal mask so masked cells look masked, not zero.
    """
    tokens = snaps.tokens(k, probe)
    src = [str(t) for t in snaps.probes[probe].get("src_tokens", [])]
    arrays: dict[str, np.ndarray] = {}
    n_heads = 0
    counts = {}
    for part in snaps.parts:
        counts[part] = snaps.n_layers(part)
        for i in range(counts[part]):
            probs = snaps.probs(k, probe, i, part)  # (H, Tq, Tk)
            arrays[layer_prefix(i, part) + "probs"] = probs
            n_heads = probs.shape[0]
    if causal:
        t = len(tokens)
        mask = np.triu(np.full((t, t), -np.inf, dtype=np.float32), k=1)  # (T, T) additive
        for i in range(counts.get("self", 0)):
            arrays[layer_prefix(i, "self") + "mask"] = mask
    if src:
        arrays["src_tokens"] = np.array(src, dtype=str)
    description = TraceDescription(kind="snapshot", n_layers=counts.get("self", 0),
                                   n_enc_layers=counts.get("enc", 0), n_heads=n_heads, causal=causal,
                                   step=int(snaps.steps[k]))
    return finish_trace(tokens, arrays, description)


class AttentionTimeline(QWidget):
    """Probe chooser, layer/head, and a step slider driving a head map of the snapshot."""

    def __init__(self, style=None, parent=None):
        super().__init__(parent)
        self.selection = Selection()  # its own: the replay must not move the live views
        self.snapshots = None
        self.causal = False
        self.probe_box = QComboBox(self)
        self.probe_box.setToolTip(PROBE_TIP)
        self.probe_box.currentIndexChanged.connect(self._redraw)
        self.probe_box.currentIndexChanged.connect(self._probe_tip)
        self.layer_box = QSpinBox(self)
        self.layer_box.setPrefix("layer ")
        self.layer_box.valueChanged.connect(lambda v: self.selection.update(layer=v))
        self.head_box = QSpinBox(self)
        self.head_box.setPrefix("head ")
        self.head_box.valueChanged.connect(lambda v: self.selection.update(head=v))
        # an encoder–decoder's replay has three attentions; the alignment forms in cross-attention, which the
        # replay opens on (it showed only the decoder's self-attention, no way to the cross one: audit)
        self.part_box = QComboBox(self)
        self.part_box.setToolTip("Which attention of the encoder–decoder the replay shows")
        self.part_box.currentIndexChanged.connect(self._part_chosen)
        self.part_box.setVisible(False)
        self.part_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.part_box.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)  # the probe gets the rest
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setToolTip("Drag through training: attention at each stored step")
        self.slider.valueChanged.connect(self._redraw)
        self.step_label = QLabel("no snapshots", self)
        self.step_label.setMinimumWidth(140)
        from attnviz.gui.views.head_map_view import HeadMapView  # with the page, not at start-up

        self.view = HeadMapView(selection=self.selection, style=style)
        # one wrapping row: the probe's whole sentence first, then part, layer, head and the map's colours. A
        # 1280×720 window's ~620 px replay put all of it on one line and cut the probe to "the big d"; now the
        # rest wraps under it there (a 1920×1080 window keeps one line: a row less above a height-limited map)
        self.probe_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        top = FlowRow(self, spacing=10)
        top.add(_joined(self, QLabel("Probe:", self), self.probe_box))
        top.add(self.part_box)
        top.add(_joined(self, self.layer_box, self.head_box))
        # the map's own row ("colours: …") joins this one, caption and box kept together
        moved = []
        while self.view.controls.count():
            item = self.view.controls.takeAt(0)
            if item.widget() is not None:
                moved.append(item.widget())
        if moved:
            top.add(_joined(self, *moved))
        self.top_row = top
        bottom = QHBoxLayout()
        bottom.addWidget(self.slider, 1)
        bottom.addWidget(self.step_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(top)
        lay.addWidget(self.view, 1)
        lay.addLayout(bottom)
        self.set_snapshots(None)

    def set_style(self, style) -> None:
        self.view.set_style(style)

    def set_snapshots(self, snaps, causal: bool = False, follow: bool = False) -> None:
        """Show ``snaps`` (or nothing); the slider starts at the last (trained) step.

        ``follow``: more snapshots of the same run (live training): the probe, layer and head stay as
        chosen, and the slider moves to the newest step unless the user has moved it back.
        """
        same_run = follow and self.snapshots is not None and snaps is not None and \
            len(self.snapshots.probes) == len(snaps.probes)
        at_end = self.slider.value() == self.slider.maximum()
        probe = self.probe_box.currentIndex() if same_run else 0
        self.snapshots, self.causal = snaps, causal
        has = snaps is not None and bool(snaps.steps)
        for w in (self.probe_box, self.layer_box, self.head_box, self.slider):
            w.setEnabled(has)
        self.probe_box.blockSignals(True)
        self.probe_box.clear()
        if has:
            for j, p in enumerate(snaps.probes):
                text = str(p.get("input", f"probe {j}"))
                # long inputs end in "…" in the list, whole in the item's tooltip (a bare [:60] cut mid-word)
                self.probe_box.addItem(text if len(text) <= 60 else text[:59] + "…")
                self.probe_box.setItemData(j, text, Qt.ItemDataRole.ToolTipRole)
            self.probe_box.setCurrentIndex(max(probe, 0))
            head0 = snaps.arrays.get("s0.p0.L0")
            self.head_box.setMaximum(max((head0.shape[0] if head0 is not None else 1) - 1, 0))
        self.probe_box.blockSignals(False)
        self._probe_tip()
        part = self.selection.part if same_run else self._set_parts(snaps if has else None)
        if has:
            self.layer_box.setMaximum(max(snaps.n_layers(part) - 1, 0))
        if has and not same_run and len(snaps.steps) > 1:  # the head where training's story shows
            from attnviz.analysis.walkthrough_default import emerged_head

            layer, head = emerged_head(snaps, max(probe, 0), part)
            self.layer_box.setValue(layer)
            self.head_box.setValue(head)
        self.slider.blockSignals(True)
        kept = self.slider.value()
        self.slider.setRange(0, max(len(snaps.steps) - 1, 0) if has else 0)
        self.slider.setValue(self.slider.maximum() if not same_run or at_end else kept)
        self.slider.blockSignals(False)
        self._redraw()

    def _probe_tip(self, *_args) -> None:
        """The combo's tooltip names the whole input it shows (its list may end a long one in "…")."""
        whole = self.probe_box.currentData(Qt.ItemDataRole.ToolTipRole)
        self.probe_box.setToolTip((f"{whole}\n" if whole else "") + PROBE_TIP)

    def _set_parts(self, snaps) -> str:
        """The part chooser for ``snaps`` (shown when it holds more than one attention); the part it opens on:
        cross-attention where there is one (where a translation's alignment forms), else self-attention."""
        from attnviz.gui.panels.part_bar import PARTS

        have = list(getattr(snaps, "parts", None) or ["self"]) if snaps is not None else ["self"]
        # the short names ("cross-attention"): the map's title says the rest, the probe keeps its room
        shown = [(p, text.split(":")[0]) for p, text, _ in PARTS if p in have]
        part = "cross" if "cross" in have else "self"
        self.part_box.blockSignals(True)
        self.part_box.clear()
        for p, text in shown:
            self.part_box.addItem(text, p)
        self.part_box.setCurrentIndex(max(self.part_box.findData(part), 0))
        self.part_box.blockSignals(False)
        self.part_box.setVisible(len(shown) > 1)
        self.selection.update(part=part)
        return part

    def _part_chosen(self, index: int) -> None:
        part = self.part_box.itemData(index)
        snaps = self.snapshots
        if part is None or snaps is None or not snaps.steps:
            return
        self.layer_box.setMaximum(max(snaps.n_layers(part) - 1, 0))
        self.selection.update(part=part, layer=self.layer_box.value())
        self._redraw()

    def _redraw(self, *_args) -> None:
        snaps = self.snapshots
        if snaps is None or not snaps.steps:
            self.step_label.setText("no snapshots")
            self.view.set_trace(None)
            return
        k = self.slider.value()
        probe = max(self.probe_box.currentIndex(), 0)
        self.step_label.setText(f"step {snaps.steps[k]} ({k + 1}/{len(snaps.steps)})")
        self.view.set_trace(snapshot_trace(snaps, k, probe, self.causal))

    @property
    def step(self) -> int | None:
        snaps = self.snapshots
        return None if snaps is None or not snaps.steps else int(snaps.steps[self.slider.value()])


def _joined(parent, *widgets) -> QWidget:
    """``widgets`` side by side as one item of the wrapping row (a caption never parted from its box)."""
    box = QWidget(parent)
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.setSpacing(6)
    for w in widgets:
        row.addWidget(w)
    return box
