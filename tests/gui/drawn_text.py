"""Every piece of text a pyqtgraph figure draws as a text item, at the size each run of it is drawn.

The layout audit (``layout_audit.scene_problems``) reads the size a LabelItem was given; a caption's smaller
``<span>`` inside it, a TextItem's own font and a legend's labels escape it. This walks every visible
QGraphicsTextItem of a scene and reads each text fragment's font as laid out, so a run of 11.4 px text in a
12 px title is found too.
"""

from __future__ import annotations

from PySide6.QtWidgets import QGraphicsTextItem

from layout_audit import pt_to_px

__all__ = ["text_runs", "small_text"]


def _shown(item) -> bool:
    while item is not None:
        if not item.isVisible() or item.opacity() <= 0.0:
            return False
        item = item.parentItem()
    return True


def text_runs(scene, scale: float = 1.0) -> list[tuple[str, float]]:
    """(text, target px) of every non-blank run of text drawn by a visible text item of ``scene``."""
    out = []
    for item in scene.items():
        if not isinstance(item, QGraphicsTextItem) or not _shown(item):
            continue
        base = item.font()
        block = item.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                text = frag.text().strip()
                if frag.isValid() and text:
                    fmt = frag.charFormat()
                    pt = fmt.fontPointSize() or fmt.font().pointSizeF()
                    if pt <= 0:
                        pt = base.pointSizeF()
                    out.append((text, pt_to_px(pt) * scale))
                it += 1
            block = block.next()
    return out


def small_text(scene, min_px: float, what: str, scale: float = 1.0) -> list[str]:
    """A problem in words for every run of text under ``min_px`` (0.05 px of rounding allowed)."""
    return [f"{what}: {text[:40]!r} is {px:.1f} px" for text, px in text_runs(scene, scale) if px < min_px - 0.05]
