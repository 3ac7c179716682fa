"""The window's state (attnviz.gui.window.state): evented models that emit on effective changes only,
and stay Qt-free so components can be read and tested without a window."""

from __future__ import annotations

import subprocess
import sys

import pytest

from attnviz.gui.window.state import LessonState, ModelState, ShownState, WindowState


def test_a_field_change_calls_listeners_once_with_the_old_value():
    model, seen = ModelState(), []
    model.connect(lambda name, value, old: seen.append((name, value, old)))
    model.ref = "coref"
    model.ref = "coref"  # the same name again is no event
    model.update(ref="charlm", new_model=True)
    assert seen == [("ref", "coref", ""), ("ref", "charlm", "coref"), ("new_model", True, False)]


def test_objects_change_by_identity_and_listeners_can_leave():
    class Box:  # == would say equal; a new trace is still a new trace
        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    shown, seen = ShownState(), []

    def listen(name, value, old):
        seen.append(name)

    shown.connect(listen)
    a, b = Box(), Box()
    shown.trace = a
    shown.trace = a
    shown.trace = b
    assert seen == ["trace", "trace"]
    shown.disconnect(listen)
    shown.pinned = a
    assert seen == ["trace", "trace"] and shown.pinned is a


def test_unknown_fields_are_refused_and_states_are_separate():
    with pytest.raises(AttributeError, match="no field 'nope'"):
        LessonState().update(nope=1)
    one, two = WindowState(), WindowState()
    one.model.first["text"] = "x"
    assert two.model.first == {} and one.selection is not two.selection


def test_the_state_module_imports_no_qt():
    code = ("import sys, attnviz.gui.window.state; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    # negative control: the same check sees Qt where it is imported
    code = code.replace("attnviz.gui.window.state", "attnviz.gui.window.main_window")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "PySide6" in out
