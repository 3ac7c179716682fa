"""Checks of the Python API's arguments: a wrong type or value is one line of AttnvizError, never a
TypeError from deep inside (``figure(layer="a")``) nor a silent ``str()`` of what was given
(``trace(text=12345)`` would otherwise trace the characters "12345")."""

from __future__ import annotations

import numbers

from attnviz.errors import AttnvizError, InputError

__all__ = ["check_text", "check_index", "check_choice", "PRECISIONS"]

PRECISIONS = ("auto", "float32", "float16")  # what the captures store (attnviz.capture, attnviz.hf.capture)


def check_text(text) -> str | None:
    """``text`` itself when it is a str (or None); one line otherwise."""
    if text is None or isinstance(text, str):
        return text
    what = "a list" if isinstance(text, (list, tuple)) else f"a {type(text).__name__}"
    more = ": trace each text on its own" if isinstance(text, (list, tuple)) else ""
    raise InputError(f"text must be a str, not {what}{more}")


def check_index(name: str, value, optional: bool = True) -> int | None:
    """An integer argument (layer, head, query…): Python or NumPy ints; bools, floats and strings refused."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise AttnvizError(f"{name} must be an int, not {value!r}")
    return int(value)


def check_choice(name: str, value, choices) -> str:
    """``value`` when it is one of ``choices``; one line naming them otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise AttnvizError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}")
    return value
