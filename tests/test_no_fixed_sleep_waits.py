"""Guard: no test waits a fixed time before it asserts that something did not happen.

A fixed sleep proves nothing about absence (on a slow machine the event comes later; on a fast one the
wait is wasted): tests wait for the event itself (``qtbot.waitUntil``/``waitSignal``, a lane no longer
busy, a timer that has fired) and assert afterwards. Short settling waits for a layout (under 200 ms) are
allowed; anything longer is refused here.
"""

import ast
from pathlib import Path

LIMIT_S = 0.2
TESTS = Path(__file__).parent


def _fixed_waits(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        value = node.args[0].value
        if not isinstance(value, (int, float)):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
        if name == "wait" and owner == "qtbot" and value / 1000 >= LIMIT_S:
            yield node.lineno, f"qtbot.wait({value})"
        elif name == "sleep" and owner == "time" and value >= LIMIT_S:
            yield node.lineno, f"time.sleep({value})"
        elif name == "qWait" and value / 1000 >= LIMIT_S:
            yield node.lineno, f"qWait({value})"


def test_no_test_waits_a_fixed_time_before_asserting():
    found = [f"{p.relative_to(TESTS)}:{line}: {what}" for p in sorted(TESTS.rglob("*.py"))
             for line, what in _fixed_waits(p)]
    assert not found, "wait for the event instead of a fixed time:\n" + "\n".join(found)


def test_the_guard_finds_a_fixed_wait(tmp_path):
    bad = tmp_path / "test_bad.py"
    bad.write_text("def test_x(qtbot):\n    qtbot.wait(300)\n    assert True\n\n"
                   "def test_y():\n    import time\n    time.sleep(0.5)\n", encoding="utf-8")
    assert [w for _, w in _fixed_waits(bad)] == ["qtbot.wait(300)", "time.sleep(0.5)"]
    ok = tmp_path / "test_ok.py"
    ok.write_text("def test_x(qtbot):\n    qtbot.wait(20)\n", encoding="utf-8")
    assert list(_fixed_waits(ok)) == []
