"""What a live lesson's caption and title say when the figure no longer shows the scene's own input or head.

A scene's caption (and title) make a claim measured on the scene's own sentence, layer, head and query. The live
lesson lets the lecturer type another sentence (Enter) or move the figure to another layer/head (Alt+arrows) or
query (a click): the figure then shows something the claim was not measured on. Issue 36: after Alt+Right the
figure of "Six steps" said "'it' gets the most: 0.130" under a caption "largest 0.39 on 'it'" with no word that
the caption was about another head. :func:`shown_note` is the qualifier for the caption, :func:`shown_title` the
title's. Qt-free.
"""

from __future__ import annotations

__all__ = ["moved_fields", "shown_note", "shown_title", "TYPED_NOTE"]

TYPED_NOTE = "(about the scene's own sentence, not the one typed)"
_HEAD_FIELDS = ("part", "layer", "head")  # any of these moved: the figure shows another head


def moved_fields(own, shown, selects, typed: bool) -> set[str]:
    """The selection fields in which ``shown`` (a SelectionState) differs from the scene's ``own``, among those the
    figure draws (``selects``); a typed sentence's query is a position in another sentence (not compared)."""
    if own is None or shown is None:
        return set()
    names = [f for f in _HEAD_FIELDS + ("query",) if f in selects and not (typed and f == "query")]
    return {f for f in names if getattr(own, f) != getattr(shown, f)}


def _own_head(own, selects) -> str:
    """The scene's own head in the figure's words: "layer 1 · head 2" (only what the figure selects)."""
    parts = [f"{'cross-attention ' if own.part == 'cross' else ''}layer {own.layer}" if "layer" in selects else "",
             f"head {own.head}" if "head" in selects else ""]
    return " · ".join(p for p in parts if p)


def shown_note(typed: bool, moved: set[str], own=None, selects=()) -> str:
    """The caption's qualifier ("" when the figure shows what the caption was measured on)."""
    what = _what(typed, moved)
    head = "head" in what
    if not what:
        return ""
    if what == ["sentence"]:
        return TYPED_NOTE
    named = f" ({_own_head(own, selects)})" if head and own is not None and _own_head(own, selects) else ""
    return f"(about the scene's own {_joined(what)}{named}, not the {'ones' if len(what) > 1 else 'one'} shown)"


def shown_title(title: str, typed: bool, moved: set[str]) -> str:
    """The scene's title, said to be the scene's when the figure shows a typed sentence or another head/query (a
    title such as "“it” finds the animal" stood over a typed sentence's figure in which "it" found the street)."""
    what = _what(typed, moved)
    if not what:
        return title
    shown = ["your sentence" if w == "sentence" else f"another {w}" for w in what]
    return f"{title} (scene's {_joined(what)}; figure: {', '.join(shown)})"


def _what(typed: bool, moved: set[str]) -> list[str]:
    """What differs from the scene's own, in the caption's words: "sentence", "head" (layer/head/part), "query"."""
    return [w for w, on in (("sentence", typed), ("head", bool(moved & set(_HEAD_FIELDS))), ("query", "query" in moved))
            if on]


def _joined(words: list[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
