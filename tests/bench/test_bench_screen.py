"""Headless benchmarks draw on a desktop-sized screen (Qt's offscreen default is 800×800, smaller than the
benchmarks' window), and leave a real display or another platform choice alone."""

from __future__ import annotations

import subprocess
import sys

from attnviz.bench.screen import SCREEN, headless_platform, use_headless_screen


def test_without_a_display_the_screen_is_desktop_sized():
    env = {"PATH": "/usr/bin:/bin"}
    use_headless_screen(env)
    assert env["QT_QPA_PLATFORM"] == headless_platform()
    code = ("from PySide6.QtGui import QGuiApplication; app = QGuiApplication([]); "
            "s = app.primaryScreen().size(); print(s.width(), s.height())")
    import os

    child = dict(os.environ, QT_QPA_PLATFORM=env["QT_QPA_PLATFORM"])
    child.pop("DISPLAY", None)
    out = subprocess.run([sys.executable, "-c", code], env=child, capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[-2:] == [str(SCREEN["width"]), str(SCREEN["height"])], out.stdout + out.stderr


def test_plain_offscreen_gets_the_screen_and_other_choices_stay():
    env = {"QT_QPA_PLATFORM": "offscreen"}
    use_headless_screen(env)
    assert env["QT_QPA_PLATFORM"].startswith("offscreen:configfile=")
    for chosen in ({"DISPLAY": ":0"}, {"QT_QPA_PLATFORM": "xcb"}, {"WAYLAND_DISPLAY": "w", "QT_QPA_PLATFORM": "wayland"}):
        env = dict(chosen)
        use_headless_screen(env)
        assert env == chosen
