"""What a decoder position of an encoder–decoder *produces*, and where it looks (Qt-free).

An encoder–decoder trace runs the decoder over its own greedy output "[BOS] y1 … yn [EOS]":
position i reads ``tokens[i]`` and produces ``tokens[i + 1]``. A cross-attention row is the
source the model consulted to write that *produced* word, so rows are named "→ y" (read as the
input token, alignments look shifted by one). The views, the prediction panel and ``export --data``
all label rows with :func:`row_labels`, so they cannot disagree.
"""

from __future__ import annotations

import re

import numpy as np

from attnviz.capture.trace import layer_prefix

__all__ = ["PRODUCED_ARROW", "END", "END_ROW", "produces_tokens", "produced_tokens", "row_labels", "end_row",
           "last_word_row", "attended_source", "position_distribution", "length_words"]

PRODUCED_ARROW = "→"
END = "(end)"  # the last position: decoding stopped, nothing was written after it
END_ROW = f"{END}: nothing written"  # that position's row label: it reads as no output word
# a marker rather than a word: attnviz's "[EOS]", Hugging Face's "</s>", "<pad>", "<|endoftext|>"
_MARKER = re.compile(r"^(\[[A-Z]+\]|<[^<>\s]*>)$")


def length_words(trace, noun: str = "token") -> str:
    """The input's length in words: "8 source + 10 target tokens" for an encoder–decoder (its ``tokens`` are
    the decoder's side alone), "12 tokens" otherwise."""
    n, src = len(trace.tokens), trace.src_tokens
    plural = lambda k: noun if k == 1 else noun + "s"  # noqa: E731
    return f"{len(src):,} source + {n:,} target {plural(n)}" if src else f"{n:,} {plural(n)}"


def produces_tokens(trace) -> bool:
    """True for an encoder–decoder trace, whose decoder positions are the model's own output, and for a
    training snapshot of one (the Training tab's replay: its cross-attention rows are the same positions; it
    named them by the token read, "[BOS]" … "[EOS]", beside the Attention tab's "→ lo" … "(end)")."""
    return trace.kind == "encoder-decoder" or (trace.kind == "snapshot" and trace.has_cross)


def produced_tokens(trace) -> list[str | None]:
    """The token each decoder position produced: ``tokens[i + 1]``, None at the last position."""
    tokens = [str(t) for t in trace.tokens]
    return tokens[1:] + [None]


def row_labels(trace, part: str = "self") -> list[str]:
    """Labels of a block's rows as they should be read.

    Cross-attention rows of an encoder–decoder: "→ un" (the token that position produced; the last
    position produced nothing and is ":data:`END_ROW`"). Every other block: its query tokens
    (:meth:`Trace.query_tokens`).
    """
    if part == "cross" and produces_tokens(trace):
        return [f"{PRODUCED_ARROW} {t}" if t is not None else END_ROW for t in produced_tokens(trace)]
    return [str(t) for t in trace.query_tokens(part)]


def last_word_row(trace) -> int:
    """The last decoder position that wrote a word: the one before the position that wrote [EOS] (a
    marker: its cross-attention row has no source word to align with) and before the (end) position that
    wrote nothing. The last position that wrote anything when the output holds no word."""
    made = produced_tokens(trace)
    words = [i for i, t in enumerate(made) if t is not None and not _MARKER.match(t.strip())]
    return words[-1] if words else max(len(made) - 2, 0)


def end_row(trace, part: str = "self") -> int | None:
    """The row of a block that wrote nothing (the last decoder position of an encoder–decoder's
    cross-attention, after [EOS]), which views draw de-emphasised; None for every other block."""
    if part == "cross" and produces_tokens(trace):
        return len(trace.tokens) - 1
    return None


def attended_source(trace, layer: int, head: int, position: int) -> int | None:
    """The source position that decoder ``position`` attends to most in cross-attention
    (``layer``, ``head``); None when the trace has no cross-attention or the indices are out of range."""
    if not trace.has_cross or not 0 <= layer < trace.n_layers or not 0 <= head < trace.n_heads:
        return None
    probs = trace[layer_prefix(layer, "cross") + "probs"]  # (H, T_dec, T_enc)
    if not 0 <= position < probs.shape[1]:
        return None
    return int(np.argmax(np.asarray(probs[head, position], dtype=np.float64)))


def position_distribution(trace, position: int | None) -> tuple[np.ndarray, int] | None:
    """The next-token distribution after decoder ``position``, and that position; None when the trace
    holds no per-position distributions.

    With no position (or one out of range) it is the last position that wrote a word (:func:`last_word_row`),
    the one the walkthrough and What if open on (one rule: :mod:`attnviz.analysis.walkthrough_default`): not the
    one that wrote [EOS] (a marker, ~100 % sure) nor the last position itself (decoding stopped there, so its
    distribution predicts nothing the model wrote: see :data:`END`)."""
    steps = trace.get("next_probs")  # (T, C), encoder–decoders
    if steps is None:
        return None
    pos = position if position is not None and 0 <= position < steps.shape[0] else \
        min(last_word_row(trace), max(steps.shape[0] - 2, 0))
    return np.asarray(steps[pos], dtype=np.float64), pos
