"""Masked-token pre-training: the claim of the "masked-lm" scene. Qt-free.

On fresh held-out sentences (``task.evaluate`` of the ``masked-lm`` task with the check's seed): the
model's top-1 word at [MASK] positions is right at least ``min_accuracy`` of the time and beats the best
context-free guess (the most frequent training word, on the same positions) by ``min_gap``; and the two
things only context tells — a hidden pronoun is "it", a hidden asserted adjective has the polarity
opposite to the denied one — are right at least ``min_context`` of the time. On the scene's own input:
what the first [MASK] guesses and which head looks hardest from it, at what (read from the trace).
"""

from __future__ import annotations

from attnviz.errors import InputError
from attnviz.lessons.claim_result import ClaimResult

__all__ = ["masked_lm"]


def masked_lm(scene, bench, trace, state, p, seed, n):
    """Holds when held-out top-1 accuracy at [MASK] ≥ ``min_accuracy`` (0.5), its lead over the unigram
    baseline ≥ ``min_gap`` (0.2), the pronoun and polarity accuracies ≥ ``min_context`` (0.9), and "it" guessed
    for at most ``max_elsewhere`` (0.05) of the other hidden words."""
    from attnviz.analysis.masked_positions import mask_rows

    rows = mask_rows(trace)
    if not rows:
        raise InputError("the masked-lm claim needs a scene text with [MASK] in it")
    if not rows[0].guesses:
        raise InputError(f"{scene.model} predicts no word per position: the masked-lm claim needs a masked-language model")
    m = bench.task_metrics(scene.model, seed)
    if "masked_accuracy" not in m:
        raise InputError(f"{scene.model} is not a masked-language model of the masked-lm task")
    need_acc, need_gap = float(p.get("min_accuracy", 0.5)), float(p.get("min_gap", 0.2))
    need_ctx = float(p.get("min_context", 0.9))
    max_else = float(p.get("max_elsewhere", 0.05))
    gap = m["masked_accuracy"] - m["unigram_accuracy"]
    # "it" guessed for every hidden word would pass the pronoun check: its guesses elsewhere are bounded too
    ok = (m["masked_accuracy"] >= need_acc and gap >= need_gap and m["it_accuracy"] >= need_ctx
          and m["it_elsewhere"] <= max_else and m["polarity_accuracy"] >= need_ctx)
    first = rows[0]
    tokens = list(trace.tokens)
    looked = [(i, w) for i, w in first.looks_at if i != first.position][0]
    guess, guess_p = first.guesses[0]
    vals = {"here": guess_p, "held": m["masked_accuracy"], "n": m["n_sentences"], "n_masked": m["n_masked"],
            "unigram": m["unigram_accuracy"], "gap": gap, "it": m["it_accuracy"], "polarity": m["polarity_accuracy"],
            "it_elsewhere": m["it_elsewhere"],
            "guess": guess, "guess_p": guess_p, "second": first.guesses[1][0] if len(first.guesses) > 1 else "",
            "layer": first.head[0], "head": first.head[1], "looks_at": tokens[looked[0]], "look_w": looked[1]}
    line = (f"{m['n_sentences']} fresh held-out sentences, {m['n_masked']} [MASK]s: top-1 right {m['masked_accuracy']:.1%} "
            f"(need ≥ {need_acc:.0%}); the most frequent training word there {m['unigram_accuracy']:.1%} (lead "
            f"{gap:+.1%}, need ≥ {need_gap:.0%}); hidden \"it\" guessed {m['it_accuracy']:.1%} (\"it\" guessed for "
            f"{m['it_elsewhere']:.1%} of other hidden words, need ≤ {max_else:.0%}), hidden asserted "
            f"adjective of the right polarity {m['polarity_accuracy']:.1%} (need ≥ {need_ctx:.0%} each). Here: "
            f"[MASK] {first.position} guesses \"{guess}\" {guess_p:.0%}; L{first.head[0]} H{first.head[1]} looks "
            f"at \"{tokens[looked[0]]}\" {looked[1]:.2f}")
    return ClaimResult("masked-lm", guess_p, m["masked_accuracy"], ok, line, vals)
