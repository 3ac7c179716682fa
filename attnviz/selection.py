"""What every view is looking at: one small evented object, Qt-free (napari's evented-model pattern).

Views read it and subscribe; clicking a thumbnail or a token sets it, and every view follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Callable

__all__ = ["Selection", "SelectionState"]


@dataclass(frozen=True)
class SelectionState:
    layer: int = 0
    head: int = 0
    query: int | None = None  # selected query token (row), None for "all"
    key: int | None = None  # selected key token (column)
    part: str = "self"  # "self", "cross" (decoder → encoder) or "enc" (encoder of an encoder–decoder)


@dataclass
class Selection:
    """Holds a SelectionState; ``update(...)`` changes fields and calls every listener once."""

    state: SelectionState = field(default_factory=SelectionState)
    _listeners: list[Callable[[SelectionState, set[str]], None]] = field(default_factory=list, repr=False)

    def __getattr__(self, name):
        if name in {f.name for f in fields(SelectionState)}:
            return getattr(self.state, name)
        raise AttributeError(name)

    def connect(self, callback: Callable[[SelectionState, set[str]], None]) -> None:
        """``callback(state, changed_field_names)`` after every effective change."""
        self._listeners.append(callback)

    def disconnect(self, callback) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def update(self, **changes) -> None:
        new = replace(self.state, **changes)
        changed = {k for k in changes if getattr(new, k) != getattr(self.state, k)}
        if not changed:
            return
        self.state = new
        for cb in list(self._listeners):
            cb(new, changed)

    def clamp(self, n_layers: int, n_heads: int, n_queries: int) -> None:
        """Keep the selection valid after a new trace arrives (fewer layers, shorter text...)."""
        s = self.state
        q = s.query if s.query is None or s.query < n_queries else None
        self.update(layer=min(s.layer, n_layers - 1), head=min(s.head, n_heads - 1), query=q,
                    key=None if s.key is not None and s.key >= n_queries else s.key)
