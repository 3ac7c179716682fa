"""The screen a headless benchmark draws on: Qt's offscreen platform with a 1920×1080 screen.

Why: the offscreen platform's default screen is 800×800. The benchmarks' 1440×900 window does not fit it,
and docking the first hidden view then grew the window (~80 ms of CPU in one event-loop turn) — a freeze
no lecturer's screen of 1280 pixels or more has. A desktop-sized screen measures what users see.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile

__all__ = ["SCREEN", "headless_platform", "use_headless_screen"]

SCREEN = {"name": "bench", "x": 0, "y": 0, "width": 1920, "height": 1080,
          "logicalDpi": 96, "logicalDpiX": 96, "logicalDpiY": 96}
_config: str | None = None


def headless_platform() -> str:
    """``offscreen:configfile=…`` naming a 1920×1080 screen (the file lives until the process exits)."""
    global _config
    if _config is None:
        folder = tempfile.mkdtemp(prefix="attnviz-bench-screen-")
        atexit.register(shutil.rmtree, folder, True)
        _config = os.path.join(folder, "screen.json")
        with open(_config, "w", encoding="utf-8") as fh:
            json.dump({"screens": [SCREEN]}, fh)
    return f"offscreen:configfile={_config}"


def use_headless_screen(env=None) -> None:
    """In ``env`` (default ``os.environ``): without a display, or with plain ``offscreen`` asked for, draw
    on :func:`headless_platform`'s screen; a real display or another platform choice is left alone."""
    env = os.environ if env is None else env
    if any(env.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY")) and not env.get("QT_QPA_PLATFORM"):
        return
    if env.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
        env["QT_QPA_PLATFORM"] = headless_platform()
