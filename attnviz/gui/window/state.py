"""The main window's state: a few small evented models, Qt-free (napari's evented-model pattern).

Each model is a dataclass whose field assignments call its listeners (``connect(callback)``,
``callback(name, value, old)``) when the value really changed; the window's components read these models,
write them and subscribe to them instead of reading each other's attributes. :class:`WindowState` holds one
of each: the loaded model, the shown (and pinned) trace, the selection (:class:`attnviz.selection.Selection`,
an evented model of its own), the built pages and the lesson. Nothing here imports Qt, so a component's
logic can be tested with plain objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable

from attnviz.selection import Selection

__all__ = ["Evented", "ModelState", "ShownState", "PagesState", "LessonState", "WindowState"]

Listener = Callable[[str, Any, Any], None]
_PLAIN = (str, int, float, bool, type(None))


def _differs(old, new) -> bool:
    # traces, models and widgets change by identity (a Trace holds arrays: == is not a question to ask them);
    # strings, numbers and flags by value, so setting the same name again is not an event
    if isinstance(old, _PLAIN) and isinstance(new, _PLAIN):
        return old != new or type(old) is not type(new)
    return old is not new


class Evented:
    """Base of an evented dataclass: assigning a field calls every listener with ``(name, value, old)``."""

    def __setattr__(self, name: str, value) -> None:
        listeners = self.__dict__.get("_listeners")
        old = self.__dict__.get(name, None)
        object.__setattr__(self, name, value)
        if listeners is None or name.startswith("_") or name not in self._field_names():
            return  # still in __init__, or not a field
        if _differs(old, value):
            for callback in list(listeners):
                callback(name, value, old)

    @classmethod
    def _field_names(cls) -> frozenset:
        names = cls.__dict__.get("_names")
        if names is None:
            names = frozenset(f.name for f in fields(cls) if not f.name.startswith("_"))
            type.__setattr__(cls, "_names", names)
        return names

    def __post_init__(self) -> None:
        object.__setattr__(self, "_listeners", [])

    def connect(self, callback: Listener) -> None:
        """Call ``callback(name, value, old)`` after every effective change of a field."""
        self._listeners.append(callback)

    def disconnect(self, callback: Listener) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def update(self, **changes) -> None:
        """Set several fields (each emits its own event, in the order given)."""
        for name, value in changes.items():
            if name not in self._field_names():
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)


@dataclass(eq=False)
class ModelState(Evented):
    """The loaded model and what was asked for."""

    loaded: Any = None  # attnviz.runtime's LoadedModel, None before the first load
    ref: str = ""  # its name or folder, as asked for ("" before the first load)
    opening_ref: str | None = None  # the model whose stored opening trace is on screen (before its load)
    new_model: bool = False  # the next trace is a new model's first: it chooses its starting view
    first: dict = field(default_factory=dict)  # what to load and run first: model, text, image, target
    loads_asked: int = 0  # how many loads were asked for (each ask is an event)


@dataclass(eq=False)
class ShownState(Evented):
    """The trace every view shows (None: nothing, with a notice) and the trace pinned for Compare."""

    trace: Any = None  # attnviz.capture.Trace
    pinned: Any = None  # a Trace the user pinned: the Compare view draws it beside ``trace``
    source: Any = None  # the input of ``trace`` (text or image): set before ``trace``, for the walkthrough
    empty_reason: str | None = None  # with no trace: why (an input refused), set before ``trace``; None: none ran


@dataclass(eq=False)
class PagesState(Evented):
    """The Training and Walkthrough pages once built (None until then: they are built after start-up)."""

    training: Any = None
    walkthrough: Any = None


@dataclass(eq=False)
class LessonState(Evented):
    """A running lesson and a scene waiting for its trace (or for the walkthrough page) to be restored."""

    stage: Any = None  # the lesson's presentation stage while it runs
    pending_scene: Any = None  # a scene whose selection and view are restored when its trace arrives
    walkthrough_scene: Any = None  # a scene whose what-if switches wait for the walkthrough page


@dataclass(eq=False)
class WindowState:
    """Everything the window's components share."""

    selection: Selection = field(default_factory=Selection)
    model: ModelState = field(default_factory=ModelState)
    shown: ShownState = field(default_factory=ShownState)
    pages: PagesState = field(default_factory=PagesState)
    lesson: LessonState = field(default_factory=LessonState)
