"""The head map's figure takes at least half of a 1280×720 window's AREA (issue 36 Deliver 6), not only half its
width: at launch, after switching coref → translate → shapes → digits, after F5 and back, and after a relaunch
that restores a layout saved at 1920×1080. The other views stay one click away (a tab, or the Views menu) and no
tab row scrolls. Control at 1920×1080: the whole model's views keep their own group beside the head map, and the
head map's figure keeps the share it had (0.29 of the window on coref in this test, before and after).

Measured before the fix, in this test: coref's head map canvas had 0.39 of the 1280×720 window's area (All heads
took a third of the views' width beside it), also after a relaunch that restored a 1920×1080 layout."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from test_layout_audit import _tab_bar_problems  # noqa: E402

pytestmark = pytest.mark.slow

BUNDLED = Path(__file__).resolve().parents[2] / "assets" / "models"
SMALL, LARGE = (1280, 720), (1920, 1080)
HALF = 0.5  # of a 1280×720 window's area for the head map's figure (issue 36 Deliver 6)
LARGE_FLOOR = 0.28  # the 1920×1080 share before this change (0.29 on coref, 0.33 after a relaunch from 1280×720)


def head_map_area_share(win) -> float:
    """The head map's figure (its plot canvas, not the dock's controls) as a share of the window's area
    (0 when no head map is on screen)."""
    view = next((v for v in win.views_area.views if type(v).__name__ == "HeadMapView"), None)
    if view is None or not view.canvas.isVisible():
        return 0.0
    return view.canvas.width() * view.canvas.height() / float(win.width() * win.height())


def _settle(turns: int = 30) -> None:
    for _ in range(turns):
        QApplication.processEvents()


def _problems(win, what: str, floor: float) -> list[str]:
    win.tabs.setCurrentIndex(0)
    _settle()
    share = head_map_area_share(win)
    out = [] if share >= floor else [f"{what}: the head map's figure has {share:.0%} of the window's area "
                                     f"({win.width()}×{win.height()}), under {floor:.0%}"]
    return out + _tab_bar_problems(win, what)


def _beside(win) -> bool:
    """Whether All heads is on screen beside the head map (the two groups apart, as at 1920×1080)."""
    docks = win.views_area.docks
    return all(n in docks and docks[n].isVisible() and not docks[n].visibleRegion().isEmpty()
               for n in ("HeadMapView", "ModelView"))


def _coref():
    folder = BUNDLED / "coref"
    if not (folder / "config.json").exists():
        pytest.skip("the bundled models are not built (make assets)")
    return folder


def _open(make_window, qtbot, size, **kwargs):
    win = make_window(model=str(_coref()), **kwargs)
    win.showNormal()
    win.resize(*size)
    qtbot.waitUntil(lambda: bool(win.views_area.views) and win.trace is not None, timeout=90_000)
    _settle()
    return win


def _walk_problems(make_window, qtbot, monkeypatch) -> list[str]:
    from test_layout_audit_switch import _switch

    monkeypatch.setenv("ATTNVIZ_ASSETS", str(BUNDLED.parent))
    win = _open(make_window, qtbot, SMALL)
    problems = _problems(win, "coref at launch", HALF)
    for model in ("translate", "shapes", "digits"):
        if (BUNDLED / model / "config.json").exists():
            _switch(win, qtbot, str(BUNDLED / model))
            problems += _problems(win, f"after switching to {model}", HALF)
    win.set_presentation(True)
    _settle()
    win.set_presentation(False)
    _settle()
    problems += _problems(win, "after F5 and back", HALF)
    return problems


def test_head_map_figure_has_half_a_1280x720_window_after_switches_and_f5(make_window, qtbot, monkeypatch):
    # found in a helper: a failing assert here holds no window in its traceback (which would leak it)
    problems = _walk_problems(make_window, qtbot, monkeypatch)
    assert not problems, "\n".join(problems)


def _control_problems(make_window, qtbot) -> list[str]:
    win = _open(make_window, qtbot, LARGE)
    problems = _problems(win, "coref at 1920×1080", LARGE_FLOOR)
    if not _beside(win):
        problems.append("1920×1080: All heads is not beside the head map (the groups were merged)")
    if getattr(win.views_area, "merged", False):
        problems.append("1920×1080: the views' groups are merged")
    return problems


def test_1920x1080_keeps_all_heads_beside_the_head_map(make_window, qtbot):
    problems = _control_problems(make_window, qtbot)
    assert not problems, "\n".join(problems)


def _relaunch_problems(make_window, qtbot, tmp_path, first, second) -> list[str]:
    from attnviz.gui.settings import AppSettings

    path = str(tmp_path / "settings.ini")
    win = _open(make_window, qtbot, first, settings=AppSettings(path))
    win.close()  # saves the geometry and both layouts
    _settle()
    win = _open(make_window, qtbot, second, settings=AppSettings(path))
    qtbot.waitUntil(lambda: win.views_installed, timeout=90_000)
    _settle(60)
    what = f"relaunched at {second[0]}×{second[1]} with a layout saved at {first[0]}×{first[1]}"
    problems = _problems(win, what, HALF if second == SMALL else LARGE_FLOOR)
    if second == LARGE and not _beside(win):
        problems.append(f"{what}: All heads is not beside the head map")
    return problems


@pytest.mark.parametrize("first, second", [(LARGE, SMALL), (SMALL, LARGE)], ids=["1920-then-1280", "1280-then-1920"])
def test_a_relaunch_restores_a_layout_fit_for_its_size(make_window, qtbot, tmp_path, first, second):
    problems = _relaunch_problems(make_window, qtbot, tmp_path, first, second)
    assert not problems, "\n".join(problems)
