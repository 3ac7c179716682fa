"""What the token strip shows, as text logic: each token's ID and, for BPE, the merges that built it.

Qt-free (the strip widget in :mod:`attnviz.gui.panels.input_tokens` only paints it); built on a worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["StripData", "build_strip", "merge_path"]


@dataclass
class StripData:
    """What the strip shows: one entry per input token."""

    tokens: list[str]
    ids: list[int]
    merges: list[list[str]] = field(default_factory=list)  # per token, e.g. ["t+h", "th+e"]
    title: str = "tokens"


def merge_path(token: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """Replay BPE merges inside one token: the steps that built it from its characters.

    Parameters
    ----------
    token : a BPE vocabulary token (no special tokens).
    ranks : merge pair → order in which it was learned (``Tokenizer.merges``).
    """
    parts = list(token)
    steps = []
    while len(parts) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        best = min((p for p in pairs if p[0] is not None), default=None)
        if best is None:
            break
        i = best[1]
        steps.append(f"{parts[i]}+{parts[i + 1]}")
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return steps


def build_strip(tokenizer, tokens: list[str], title: str = "tokens") -> StripData:
    """Token IDs (and BPE merge paths) for ``tokens`` as the model saw them. Runs in a worker."""
    from attnviz.text.tokenizer import SPECIALS

    tokens = [str(t) for t in tokens]
    if tokenizer is None:
        return StripData(tokens, [-1] * len(tokens), title=title)
    ids = [tokenizer.id_of(t) for t in tokens]
    merges: list[list[str]] = []
    if tokenizer.kind == "bpe":
        ranks = getattr(tokenizer, "_attnviz_merge_ranks", None)
        if ranks is None:
            ranks = {tuple(m): i for i, m in enumerate(tokenizer.merges)}
            tokenizer._attnviz_merge_ranks = ranks  # parsing the merges JSON once per model is enough
        merges = [[] if t in SPECIALS else merge_path(t, ranks) for t in tokens]
    return StripData(tokens, ids, merges, title)
