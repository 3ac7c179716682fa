"""Which numbers a heatmap's colours stand for: fixed 0–1, each map's own maximum, or one shared maximum.

Each view has a default (attention weights: fixed 0–1, so a near-uniform 0.1 never looks like a 0.9 peak;
rollout: one shared scale for its maps side by side); the style's
``scale`` (``attnviz export --color-scale``) or the view's chooser overrides it. The colour bar states
the choice in words.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox

__all__ = ["ScaleChooser", "scale_top", "scale_note", "MODE_TEXT"]

MODE_TEXT = {"fixed": "fixed 0–1", "per-map": "each map its own maximum", "shared": "one scale for all heads"}


def scale_top(mode: str, own_max: float, shared_max: float) -> float:
    """The value drawn with the top colour: 1, the map's own maximum or the shared one (never ≤ 0)."""
    top = {"fixed": 1.0, "per-map": own_max, "shared": shared_max}[mode]
    top = float(top)
    return top if np.isfinite(top) and top > 0 else 1.0


def scale_note(mode: str, what: str = "heads", count: int | None = None) -> str:
    """The words the colour bar adds to its label: "fixed 0–1", "this map's maximum", "shared by 8 heads"."""
    if mode == "fixed":
        return "fixed scale 0–1"
    if mode == "per-map":
        return "scale: this map's maximum"
    return f"one scale for all {count} {what}" if count else f"one scale for all {what}"


class ScaleChooser(QComboBox):
    """A combo box of colour-scale modes for a view's control row.

    ``mode`` is the effective mode: the user's pick, else the style's (when not "auto"), else the
    view's ``default``. ``changed`` is emitted when the user picks another one.
    """

    changed = Signal(str)

    def __init__(self, default: str, shared_text: str = "one scale for all heads", parent=None):
        super().__init__(parent)
        self.default = default
        texts = dict(MODE_TEXT, shared=shared_text)
        for mode in ("fixed", "per-map", "shared"):
            self.addItem(texts[mode], mode)
        self.setToolTip("Colour scale: which values the darkest and brightest colours stand for")
        self._style_mode = "auto"
        self._picked: str | None = None
        self._show(default)
        self.activated.connect(self._user_pick)
        self.currentIndexChanged.connect(lambda _i: self.updateGeometry())  # the minimum follows the pick

    def minimumSizeHint(self):  # noqa: N802 - Qt's name
        """Room for the current mode's text (Qt's: the longest item's), so a narrow dock (a 1280×720 window)
        can give the map the width without cutting what the box says."""
        hint = super().minimumSizeHint()
        fm = self.fontMetrics()
        longest = max((fm.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        hint.setWidth(max(0, hint.width() - longest + fm.horizontalAdvance(self.currentText())))
        return hint

    @property
    def mode(self) -> str:
        if self._picked is not None:
            return self._picked
        return self._style_mode if self._style_mode != "auto" else self.default

    def follow_style(self, style_mode: str) -> None:
        """A new style arrived: an explicit scale in it (an export's) replaces the user's pick."""
        self._style_mode = style_mode
        if style_mode != "auto":
            self._picked = None
        self._show(self.mode)

    def set_mode(self, mode: str) -> None:
        """Pick ``mode`` as a user would (scripts and tests)."""
        self._picked = mode
        self._show(mode)
        self.changed.emit(mode)

    def _user_pick(self, index: int) -> None:
        self.set_mode(self.itemData(index))

    def _show(self, mode: str) -> None:
        self.blockSignals(True)
        self.setCurrentIndex(max(0, self.findData(mode)))
        self.blockSignals(False)
