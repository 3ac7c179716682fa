"""How specifically the coref model's heads resolve the pronoun, measured on generated sentences.

A head "resolves it" only if the pronoun's row finds the referent AND the other rows do not: a head
whose every row looks at the answer noun (an answer broadcast) would score 100 % on the pronoun row
alone. So every head gets, over a set of sentences:

* ``it_weight`` / ``it_hits``: the pronoun row's mean weight on the referent, and how often it peaks there;
* ``others_weight``: the mean weight the other rows (every real token but "it") put on the referent;
* ``others_not_self``: the same without the noun's own row;
* ``deleted_weight``: the same sentences with "it" deleted: the mean weight all rows put on the noun
  the pronoun would have named (nothing should look for it any more);
* ``deleted_row_max``: with "it" deleted, the largest weight any single row puts on that noun, over
  every sentence (the noun's own row excluded: a noun reading itself is not looking for a referent,
  it is how a noun names itself). A mean over rows hides one row that still fetches the noun;
* ``specificity``: ``it_weight − others_weight``, the score the lecture head is chosen by (a
  continuous score, so two perfect heads do not tie the way argmax shares do).

Each is an (n_layers, n_heads) array, split by referent kind (animate: "tired" → animal; place:
"wide" → street) where that matters. Qt-free.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.tasks.coref_words import ANIMATE
from attnviz.tasks.text_data import batched_probs, pad_ids

__all__ = ["head_profile", "pick_head"]


def _positions(task, items) -> tuple[list[list[str]], list[int], list[int]]:
    tokens = [task.tokenizer.prefix + text.split() for text, _ in items]
    return tokens, [t.index("it") for t in tokens], [t.index(r) for t, (_, r) in zip(tokens, items)]


def _probs(loaded, task, tokens: list[list[str]], query: list[int]):
    """Each layer's attention (B, H, T, T) as numpy, and the padding mask (B, T)."""
    ids, pad = pad_ids([[task.tokenizer.index[t] for t in row] for row in tokens], task.tokenizer.pad_id)
    inputs = {"ids": ids, "key_pad": pad, "pool_index": torch.tensor(query)}
    with torch.no_grad():
        _, probs = batched_probs(loaded.model, {k: v.to(loaded.device) for k, v in inputs.items()})
    return [p.double().cpu().numpy() for p in probs], pad.numpy()


def _weights_on(probs, pad, rows_keep: np.ndarray, target: list[int]) -> np.ndarray:
    """(L, H): per example the mean over kept rows of the weight on ``target``, averaged over examples."""
    B = len(target)
    out = []
    for p in probs:  # (B, H, T, T)
        col = p[np.arange(B), :, :, target]  # (B, H, T): every row's weight on the target key
        keep = rows_keep[:, None, :]
        out.append(((col * keep).sum(-1) / keep.sum(-1)).mean(0))
    return np.stack(out)


def head_profile(loaded, task, items) -> dict:
    """The measures of the module docstring for every head, over ``items`` ((sentence, referent) pairs)."""
    tokens, it, ref = _positions(task, items)
    probs, pad = _probs(loaded, task, tokens, it)
    B = len(items)
    rows = np.arange(B)
    animate = np.array([r in ANIMATE for _, r in items])
    it_w = np.stack([p[rows, :, it, ref] for p in probs], 1)  # (B, L, H)
    peaks = np.stack([p[rows, :, it].argmax(-1) == np.array(ref)[:, None] for p in probs], 1)
    others = ~pad.copy()
    others[rows, it] = False
    rest = others.copy()
    rest[rows, ref] = False  # the noun's own row: a noun reading itself is how it names itself
    # the same sentences without "it": no row has a pronoun to resolve any more
    gone = [t[:i] + t[i + 1:] for t, i in zip(tokens, it)]
    ref_gone = [r - (r > i) for r, i in zip(ref, it)]
    probs_gone, pad_gone = _probs(loaded, task, gone, [0] * B)
    row_max = []
    for p in probs_gone:  # (B, H, T, T)
        col = np.where(pad_gone[:, None, :], 0.0, p[rows, :, :, ref_gone])  # (B, H, T): each row's weight on the noun
        col[rows, :, ref_gone] = 0.0  # the noun's own row
        row_max.append(col.max(-1).max(0))
    return {"it_weight": it_w.mean(0), "it_hits": peaks.mean(0),
            "it_weight_animate": it_w[animate].mean(0) if animate.any() else np.full(it_w.shape[1:], np.nan),
            "it_weight_place": it_w[~animate].mean(0) if (~animate).any() else np.full(it_w.shape[1:], np.nan),
            "others_weight": _weights_on(probs, pad, others, ref),
            "others_not_self": _weights_on(probs, pad, rest, ref),
            "deleted_weight": _weights_on(probs_gone, pad_gone, ~pad_gone, ref_gone),
            "deleted_row_max": np.stack(row_max), "n": B}


def pick_head(profile: dict) -> tuple[int, int, float]:
    """(layer, head, margin): the head with the highest ``specificity`` and its lead over the runner-up."""
    score = profile["it_weight"] - profile["others_weight"]
    order = np.argsort(score, axis=None)[::-1]
    layer, head = (int(i) for i in np.unravel_index(int(order[0]), score.shape))
    margin = float(score.flat[order[0]] - score.flat[order[1]]) if score.size > 1 else float("inf")
    return layer, head, margin
