"""The About box: what this is, and the versions a bug report needs (attnviz, Python, torch, Qt...)."""

from __future__ import annotations

import platform
import sys

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

__all__ = ["AboutDialog", "version_lines"]


def _dist_version(name: str) -> str:
    from importlib import metadata

    module = sys.modules.get(name)
    if module is not None and getattr(module, "__version__", None):
        return str(module.__version__)
    try:
        # metadata, not an import: the About box must not pull torch into a window that has not needed it
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def version_lines(device: str = "") -> list[tuple[str, str]]:
    """(name, version) pairs shown in the About box and copied into bug reports."""
    import PySide6

    from attnviz import __version__

    rows = [
        ("attnviz", __version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("PyTorch", _dist_version("torch")),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("pyqtgraph", _dist_version("pyqtgraph")),
        ("NumPy", _dist_version("numpy")),
    ]
    if device:
        rows.append(("Device", device))
    rows.append(("Platform", platform.platform(terse=True)))
    return rows


class AboutDialog(QDialog):
    """Modal About box listing versions and the compute device."""

    def __init__(self, device: str = "", parent=None):
        super().__init__(parent)
        self.setWindowTitle("About attnviz")
        self.rows = version_lines(device)
        table = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in self.rows)
        text = QLabel(
            "<h2>attnviz</h2>"
            "<p>Look inside small transformers: attention maps, rollout, vision transformers and "
            "self-attention step by step, exported for lectures.</p>"
            f"<table>{table}</table>"
        )
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, self)
        buttons.accepted.connect(self.accept)
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        lay.addWidget(buttons)
        self.setMinimumWidth(420)
