"""A token's display text is one function (attnviz/text/token_display.py): byte-level BPE markers read as the
space or newline they stand for, whitespace made visible; the app's axes, the input strip and the CLI use it, and
the HTML page's script (``tok``/``tokHover``, which runs without Python) gives the same text for every token."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from attnviz.text.token_display import differs_from_raw, display_token, plain_token

TOKENS = ["Ġassigned", "Ċ", "ĊĊ", "▁the", "Ġ", "▁", " ", "", "\t", "\n", "a\tb", "line\nnext", "cat", "[CLS]",
          "<|endoftext|>", "  two", "Ġ Ġx", "ĠĠ", "ĠĠĠĠĠĠĠĠ", "▁▁▁▁", "é", "3,4",
          # byte-level pieces of characters beyond ASCII (GPT-2, Llama 3, Qwen): whole and split between tokens
          "âĢĻ", "ĠâĢľ", "ä¸Ń", "Ã©", "ðŁĺĢ", "âĢ", "ðŁĺ", "Ġâ", "café", "Ģ",
          # bytes below 0x20 as byte-level tokens (a random model's top predictions), control characters as text
          "Ĕ", "Č", "ĠĔ", "\r", "a\x7fb", "\x85"]


def test_byte_level_markers_read_as_what_they_stand_for():
    assert display_token("Ġassigned") == "assigned" and display_token("▁the") == "the"
    assert display_token("Ċ") == "⏎" and display_token("Ġ") == "␣" and display_token("") == "∅"
    assert display_token("cat") == "cat" and display_token("[CLS]") == "[CLS]"  # control: nothing to read
    assert differs_from_raw("Ġassigned") and not differs_from_raw("cat") and not differs_from_raw(" ")


def test_byte_level_characters_read_as_the_text_they_spell():
    """A curly quote in a document is three byte-level characters (âĢĻ); a label shows ’, a split character its
    bytes, and text that is not bytes (WordPiece's "é", "café") stays as it is (the control)."""
    assert [display_token(t) for t in ("âĢĻ", "ĠâĢľ", "ä¸Ń", "Ã©", "ðŁĺĢ")] == ["’", "“", "中", "é", "😀"]
    assert display_token("âĢ") == "<0xE2><0x80>" and display_token("Ġâ") == "<0xE2>"
    assert display_token("é") == "é" and display_token("café") == "café" and not differs_from_raw("é")
    assert differs_from_raw("âĢĻ")


def test_control_characters_are_named_not_drawn_as_nothing():
    """Byte-level BPE spells the bytes 0x00–0x1F as single tokens (Ĕ is 0x14): a label showed the raw control
    character, which a font draws as an empty box. Every control character other than newline and tab reads as
    its byte; the control: printable text and the visible whitespace marks stay as they were."""
    assert display_token("Ĕ") == "<0x14>" and display_token("Č") == "<0x0C>" and display_token("ĠĔ") == "<0x14>"
    assert display_token("\r") == "<0x0D>" and display_token("a\x7fb") == "a<0x7F>b" and display_token("\x85") == "<0x85>"
    assert display_token("Ċ") == "⏎" and display_token("a\tb") == "a⇥b" and display_token("Ġcat") == "cat"
    assert not any(ch.isprintable() is False for t in TOKENS for ch in display_token(t))


def test_byte_level_reading_matches_the_tokenizer_s_own_decoding():
    """Independent recomputation: the `tokenizers` library's own ByteLevel decoder gives the same text for every
    piece of a sentence with curly quotes, accents, CJK and an emoji; its pre-tokenizer's table, not ours."""
    from tokenizers import decoders, pre_tokenizers

    text = "He said “it’s fine” — café 中文 😀 ok"
    pieces = [p for p, _ in pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text)]
    assert any(not p.isascii() for p in pieces)
    dec = decoders.ByteLevel()
    assert [plain_token(p) for p in pieces] == [dec.decode([p]) for p in pieces]
    # control: the old reading (only Ġ and Ċ) differs on the same pieces
    old = [p.replace("Ġ", " ").replace("Ċ", "\n") for p in pieces]
    assert old != [dec.decode([p]) for p in pieces]


def _script_functions() -> str:
    from attnviz.export.html_script import SCRIPT

    lines = SCRIPT.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("function plain("))
    end = next(i for i, line in enumerate(lines) if line.startswith("function tokHover("))
    return "\n".join(lines[start:end + 1])


def _node():
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node to run the page's script with (apt-get install nodejs)")
    return node


def _page_labels() -> list[tuple[str, str]]:
    """(label, hover) the page's script gives each of TOKENS, run in node."""
    program = (_script_functions() + f"\nconst T = {json.dumps(TOKENS)};\n"
               "console.log(JSON.stringify(T.map((t) => [tok(t), tokHover(t)])));")
    done = subprocess.run([_node(), "-e", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [tuple(x) for x in json.loads(done.stdout)]


def test_the_html_page_shows_the_same_text_as_the_app():
    shown = _page_labels()
    assert [s for s, _ in shown] == [display_token(t) for t in TOKENS]
    # the page's hover names the raw token exactly where the app says the label hides more than whitespace
    assert [h != s for s, h in shown] == [differs_from_raw(t) for t in TOKENS]


def test_the_comparison_sees_a_different_rule():
    """Negative control: the app's old rule (whitespace made visible, BPE markers kept) differs from the page."""
    def old(t):
        return {" ": "␣", "\n": "⏎", "\t": "⇥", "": "∅"}.get(t, t.replace("\n", "⏎").replace("\t", "⇥"))

    assert [s for s, _ in _page_labels()] != [old(t) for t in TOKENS]


def test_every_label_of_a_token_goes_through_the_one_function():
    """The app's axes and input strip and the CLI's steps table use it (no second token-label rule)."""
    from attnviz.gui.panels.input_tokens import shown_token
    from attnviz.gui.widgets import token_axis

    assert token_axis.display_token is display_token
    assert shown_token("Ġassigned") == "assigned"
    import attnviz.commands.steps as steps

    assert steps.display_token is display_token
    assert not re.search(r"u0120|Ġ", Path(token_axis.__file__).read_text(encoding="utf-8"))


def test_a_token_of_spaces_alone_is_a_visible_label():
    # code tokenizers hold indentation runs ("ĠĠĠĠ", "▁▁▁▁"): the prediction panel drew one as an empty row
    from attnviz.text.token_display import display_token

    assert display_token("ĠĠ") == "␣␣" and display_token("ĠĠĠĠĠĠĠĠĠĠĠĠ") == "␣×12"
    assert display_token("▁▁▁▁") == "␣×4"
    assert display_token("Ġword") == "word"  # control: a word keeps its leading space out of the label
