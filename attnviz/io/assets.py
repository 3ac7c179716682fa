"""Where the bundled models, sample images and icons live.

Three places, first found wins:

1. ``ATTNVIZ_ASSETS`` (tests, a lecturer's own model collection);
2. the package data ``attnviz/_assets`` of an installed wheel or a PyInstaller bundle, found with
   :mod:`importlib.resources` (``setup.py`` copies the top-level ``assets/`` there at build time);
3. the checkout's top-level ``assets/`` (running from the source tree, editable installs).

Cheap to import (no torch): the app asks for its icon before torch has loaded.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["assets_dir", "bundled_models", "icon_path", "packaged_assets", "source_assets"]

_PACKAGE_DATA = "_assets"


def source_assets() -> Path:
    """The top-level ``assets/`` folder of the checkout this module was imported from."""
    return Path(__file__).resolve().parents[2] / "assets"


def packaged_assets() -> Path | None:
    """``attnviz/_assets`` as a folder on disk, or None when this is not an installed build.

    Wheels are installed unpacked and PyInstaller puts package data beside the code, so the resource
    is a real folder; a zipped install (no folder to hand to Qt or safetensors) counts as absent.
    """
    try:
        found = resources.files("attnviz") / _PACKAGE_DATA
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - attnviz is always importable here
        return None
    path = Path(str(found))
    return path if path.is_dir() else None


def assets_dir() -> Path:
    """The bundled assets folder: ``ATTNVIZ_ASSETS``, else the installed package data, else the checkout's."""
    env = os.environ.get("ATTNVIZ_ASSETS")
    if env:
        return Path(env)
    return packaged_assets() or source_assets()


def bundled_models() -> list[str]:
    """Names of the bundled models (folders of ``assets/models`` holding a ``config.json``)."""
    root = assets_dir() / "models"
    if not root.is_dir():
        return []
    # dot-folders are a save's temporary or backup copies (see attnviz.models.checkpoint), not models
    return sorted(p.name for p in root.iterdir() if not p.name.startswith(".") and (p / "config.json").is_file())


def icon_path(name: str = "attnviz.svg") -> Path:
    """An icon from ``assets/icons`` (falling back to the shipped one when an override lacks it)."""
    found = assets_dir() / "icons" / name
    if found.is_file():
        return found
    return (packaged_assets() or source_assets()) / "icons" / name
