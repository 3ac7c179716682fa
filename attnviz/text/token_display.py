"""A token's display text: what every label of a token shows (app, HTML page, CLI, exported figures). Qt-free.

Byte-level BPE tokenizers write a leading space as ``Ġ`` (GPT-2, Llama 3) or ``▁`` (SentencePiece) and a newline
as ``Ċ``; a label shows what they stand for. Whitespace is then made visible, so a token that is only a space or a
newline does not look like nothing, and the space that starts a word is left out of the word's label (the hover
names the raw token where it differs, :func:`differs_from_raw`). The interactive HTML page runs the same rules in
its script (``tok`` in :mod:`attnviz.export.html_script`); ``tests/export/test_token_display.py`` checks that the
two agree.
"""

from __future__ import annotations

import re

__all__ = ["display_token", "plain_token", "differs_from_raw"]

_BYTE_LEVEL = str.maketrans({"\u0120": " ", "\u2581": " ", "\u010a": "\n"})  # Ġ, ▁ → space; Ċ → newline
_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "": "∅"}
_LEADING_SPACES = re.compile(r"^ +(?=\S)")


def plain_token(token) -> str:
    """The text a token stands for: byte-level BPE's space and newline markers as the characters."""
    return str(token).translate(_BYTE_LEVEL)


def display_token(token) -> str:
    """A token as a label: BPE markers read, whitespace made visible, a word's leading space left out.

    Examples
    --------
    >>> display_token("Ġassigned"), display_token("Ċ"), display_token(" "), display_token("a\\tb")
    ('assigned', '⏎', '␣', 'a⇥b')
    """
    text = plain_token(token)
    if text in _VISIBLE:
        return _VISIBLE[text]
    return _LEADING_SPACES.sub("", text).replace("\n", "⏎").replace("\t", "⇥")


def differs_from_raw(token) -> bool:
    """Whether a token's label hides more than its whitespace (a BPE marker or a word's leading space), so a
    hover should name the raw token too."""
    token = str(token)
    return plain_token(token) != token or bool(_LEADING_SPACES.match(token))
