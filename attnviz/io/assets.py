"""Where the bundled models, sample images and icons live.

Cheap to import (no torch): the app asks for its icon before torch has loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["assets_dir", "bundled_models", "icon_path"]

_SOURCE_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def assets_dir() -> Path:
    """The bundled assets folder (``ATTNVIZ_ASSETS`` overrides, e.g. for packaged builds)."""
    env = os.environ.get("ATTNVIZ_ASSETS")
    return Path(env) if env else _SOURCE_ASSETS


def bundled_models() -> list[str]:
    """Names of the bundled models (folders of ``assets/models`` holding a ``config.json``)."""
    root = assets_dir() / "models"
    if not root.is_dir():
        return []
    # dot-folders are a save's temporary or backup copies (see attnviz.models.checkpoint), not models
    return sorted(p.name for p in root.iterdir() if not p.name.startswith(".") and (p / "config.json").is_file())


def icon_path(name: str = "attnviz.svg") -> Path:
    """An icon from ``assets/icons`` (falling back to the source tree's when an override lacks it)."""
    found = assets_dir() / "icons" / name
    return found if found.is_file() else _SOURCE_ASSETS / "icons" / name
