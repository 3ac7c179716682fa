"""A token's display text: what every label of a token shows (app, HTML page, CLI, exported figures). Qt-free.

Byte-level BPE tokenizers (GPT-2, Llama 3, Qwen, SmolLM) write each byte of the text as one printable character
(a leading space as ``Ġ``, a newline as ``Ċ``, the three bytes of "’" as ``âĢĻ``); SentencePiece writes a space as
``▁``. A label shows the text they stand for: a token made only of the byte alphabet, with a character beyond ASCII,
whose bytes are valid UTF-8 reads as that text; one that holds part of a character (a multi-byte character split
between tokens) shows its bytes as ``<0xE2>``, the way SentencePiece's byte tokens are written. Latin-1 text that is
not valid UTF-8 as bytes (WordPiece's "é") is left as it is. Whitespace is then made visible, so a token that is only a space or a
newline does not look like nothing, and the space that starts a word is left out of the word's label (the hover
names the raw token where it differs, :func:`differs_from_raw`). The interactive HTML page runs the same rules in
its script (``tok`` in :mod:`attnviz.export.html_script`); ``tests/export/test_token_display.py`` checks that the
two agree.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["display_token", "plain_token", "differs_from_raw", "numbered_label", "numbered_labels", "merge_step_label", "axis_labels"]

_BYTE_LEVEL = str.maketrans({"\u0120": " ", "\u2581": " ", "\u010a": "\n"})  # Ġ, ▁ → space; Ċ → newline


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's byte-to-character table, inverted: printable bytes stand for themselves, the other 68 are moved to
    U+0100 onwards (so a space is ``Ġ``)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in kept]
    return {**{chr(b): b for b in kept}, **{chr(256 + n): b for n, b in enumerate(moved)}}


_BYTE_OF = _byte_alphabet()
_MOVED = range(0x100, 0x100 + 68)  # characters only the byte alphabet uses: a token holding one is byte-level


def _byte_text(token: str) -> str | None:
    """The text a byte-level token's bytes spell, or None where the token is not (only) byte-level."""
    if token.isascii() or any(c not in _BYTE_OF for c in token):
        return None
    raw = bytes(_BYTE_OF[c] for c in token)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if not any(ord(c) in _MOVED for c in token):
            return None  # Latin-1 text ("é"), not bytes
        return "".join(chr(b) if b < 0x80 else f"<0x{b:02X}>" for b in raw)  # part of a character
_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "": "∅"}
_MARKS = set("".join(_VISIBLE.values()))  # whitespace made visible: a mark of its own, not quoted
_LEADING_SPACES = re.compile(r"^ +(?=\S)")
# control characters other than newline and tab (C0, DEL, C1): a font draws them as nothing or a box. Byte-level
# BPE spells the bytes 0x00–0x1F as single tokens ("Ĕ" is 0x14), which a model's top predictions often are
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain_token(token) -> str:
    """The text a token stands for: byte-level BPE's bytes as the characters they spell, SentencePiece's ``▁`` as
    a space."""
    token = str(token)
    text = _byte_text(token)
    return token.translate(_BYTE_LEVEL) if text is None else text


def display_token(token) -> str:
    """A token as a label: BPE markers read, whitespace made visible, a word's leading space left out.

    Examples
    --------
    >>> display_token("Ġassigned"), display_token("Ċ"), display_token(" "), display_token("a\\tb")
    ('assigned', '⏎', '␣', 'a⇥b')
    >>> display_token("âĢĻ"), display_token("ĠâĢľ"), display_token("âĢ"), display_token("é")
    ('’', '“', '<0xE2><0x80>', 'é')
    >>> display_token("Ĕ"), display_token("\\r"), display_token("ĠĠĠ"), display_token("ĠĠĠĠĠĠĠĠ")
    ('<0x14>', '<0x0D>', '␣␣␣', '␣×8')
    """
    text = plain_token(token)
    if text in _VISIBLE:
        return _VISIBLE[text]
    if text.strip(" ") == "":  # a run of spaces (code's indentation tokens) would label as nothing
        return "␣" * len(text) if len(text) <= 3 else f"␣×{len(text)}"
    text = _LEADING_SPACES.sub("", text).replace("\n", "⏎").replace("\t", "⇥")
    return _CONTROL.sub(lambda m: f"<0x{ord(m.group()):02X}>", text)


def differs_from_raw(token) -> bool:
    """Whether a token's label hides more than its whitespace (a BPE marker or a word's leading space), so a
    hover should name the raw token too."""
    token = str(token)
    return plain_token(token) != token or bool(_LEADING_SPACES.match(token))


def numbered_label(i: int, token) -> str:
    """A token's label with its position ("4,100 the"); a token of punctuation or symbols alone is quoted
    ("5 “,”"): after the number a bare comma read as a stray mark of the number's (issue 36, the lesson's
    word-order scene showed "5 ,")."""
    text = display_token(token)
    if text and all(unicodedata.category(c)[0] in "PS" and c not in _MARKS for c in text):
        text = f"“{text}”"
    return f"{i:,} {text}"


def numbered_labels(tokens) -> list[str]:
    """Labels that name each token's position too ("4,100 the"): a long map's axis draws every n-th token, and
    a word alone does not say where in a document of thousands of tokens its row is."""
    return [numbered_label(i, t) for i, t in enumerate(tokens)]


_MERGE_MARKS = str.maketrans({"\u0120": "␣", "\u2581": "␣", " ": "␣", "\u010a": "⏎", "\u0109": "⇥"})  # Ġ ▁ Ċ ĉ


def merge_step_label(step: str) -> str:
    """A BPE merge step as the token strip shows it: byte-level BPE's and SentencePiece's markers of a space,
    newline and tab made visible, the rest of the vocabulary's pieces as they are.

    A merge's leading space is part of what was learned ("Ġ+be" joins a space to "be"), so it is shown as ␣
    rather than dropped as a word's label drops it.

    >>> merge_step_label("Ġ+be"), merge_step_label("Ġbe+cause"), merge_step_label("t+h")
    ('␣+be', '␣be+cause', 't+h')
    """
    return step.translate(_MERGE_MARKS)


def axis_labels(r, long: bool) -> tuple[list, list]:
    """A map's query and key labels (``r``: a resolved selection); a pooled long map's name their positions (its
    axes draw every n-th token)."""
    q, k = r.query_tokens, r.key_tokens
    return (numbered_labels(q), numbered_labels(k)) if long else (q, k)
