"""Helpers the sequence tasks share (reverse, induction, translate).

A deterministic hash of each example decides whether it belongs to the training or the held-out
split, so the two are disjoint by construction whatever the seed; user text is checked symbol by
symbol; attention probabilities of a whole batch are read through the capture machinery.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np
import torch

from attnviz.capture.batch import batch_attention  # noqa: F401  (re-exported for the tasks)
from attnviz.errors import AttnvizError, InputError

__all__ = [
    "HOLDOUT_EVERY", "split_of", "sample_split", "pad_rows", "parse_symbols", "batch_attention",
    "best_head", "check_vocab", "alignment_hits", "encode_pairs", "greedy_scores",
]

HOLDOUT_EVERY = 8  # one example in 8 (by hash) is held out for evaluation
SPLITS = ("train", "test")


def split_of(example: Sequence[int]) -> str:
    """"test" for one example in ``HOLDOUT_EVERY`` (by a CRC-32 of its ids), else "train"."""
    digest = zlib.crc32(np.asarray(example, dtype=np.int64).tobytes())
    return "test" if digest % HOLDOUT_EVERY == 0 else "train"


def sample_split(draw: Callable[[np.random.Generator, int], list], key: Callable[[tuple], Sequence[int]],
                 split: str, n: int, rng: np.random.Generator) -> list:
    """``n`` examples from ``draw(rng, k)`` whose ``key`` hashes into ``split`` (rejection sampling).

    Parameters
    ----------
    draw : makes a list of ``k`` random examples (vectorised where it pays).
    key : the integer sequence that identifies an example (what the split hash is computed on).
    split : "train" or "test".
    n : how many examples.
    rng : the generator; the result is a deterministic function of its state.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    keep = 1 / HOLDOUT_EVERY if split == "test" else 1 - 1 / HOLDOUT_EVERY
    out: list = []
    while len(out) < n:
        wanted = n - len(out)
        out.extend(ex for ex in draw(rng, int(wanted / keep * 1.1) + 4) if split_of(key(ex)) == split)
    return out[:n]


def pad_rows(rows: Sequence[Sequence[int]], fill: int, width: int | None = None) -> np.ndarray:
    """Right-pad integer rows to one width: (len(rows), width)."""
    width = width or max(len(r) for r in rows)
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def parse_symbols(text: str, alphabet: Sequence[str], max_n: int, truncate: bool, what: str):
    """Split typed text into single-letter symbols, ignoring spaces; clear errors for anything else.

    Returns (symbols, notice) where notice is None or says what was cut off.
    """
    if text is None or not str(text).strip():
        raise InputError(f"the text is empty: type {what}")
    symbols = [c for c in str(text).lower() if not c.isspace()]
    allowed = set(alphabet)
    bad = sorted({c for c in symbols if c not in allowed})
    if bad:
        shown = " ".join(repr(c) for c in bad[:8])
        raise InputError(f"{shown} {'is' if len(bad) == 1 else 'are'} not in this model's alphabet "
                         f"({alphabet[0]}–{alphabet[-1]}): type {what}")
    notice = None
    if len(symbols) > max_n:
        if not truncate:
            raise InputError(f"the text has {len(symbols)} letters but this model takes at most {max_n}; shorten it")
        notice = f"the text was truncated to {max_n} letters (it had {len(symbols)})"
        symbols = symbols[:max_n]
    return symbols, notice


def check_vocab(task_tok, loaded_tok, what: str = "vocabulary") -> None:
    """Refuse to evaluate a model whose tokenizer differs from the task's (ids would not match)."""
    if loaded_tok is not None and list(loaded_tok.vocab) != list(task_tok.vocab):
        raise AttnvizError(f"the model's {what} differs from this task's: it was not trained on this task")


@torch.no_grad()
def best_head(scores: np.ndarray) -> tuple[int, int, float]:
    """(layer, head, score) of the largest entry of a (L, H) score table."""
    layer, head = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(layer), int(head), float(scores[layer, head])


def alignment_hits(cross: list[np.ndarray], triples) -> tuple[np.ndarray, np.ndarray]:
    """How often cross-attention's argmax lands on the gold source position.

    Parameters
    ----------
    cross : per decoder layer, (B, H, T_tgt, T_src) probabilities of one batch.
    triples : (example, decoder row, gold source position) for every aligned target position.

    Returns
    -------
    (per_head, per_layer): (L, H) share for each single head, and (L,) share for each layer's
    head-averaged attention.
    """
    b_idx, rows, cols = (list(c) for c in zip(*triples))
    probs = np.stack(cross)  # (L, B, H, Tt, Ts)
    picked = probs[:, b_idx, :, rows, :]  # (N, L, H, Ts): the advanced indices move to the front
    gold = np.asarray(cols)
    per_head = (picked.argmax(-1) == gold[:, None, None]).mean(0)  # (L, H)
    per_layer = (picked.mean(2).argmax(-1) == gold[:, None]).mean(0)  # (L,)
    return per_head, per_layer


def encode_pairs(src_rows, tgt_rows, src_pad: int, tgt_pad: int, bos: int, eos: int) -> tuple[dict, torch.Tensor]:
    """Encoder–decoder teacher-forcing batch: (inputs of ``model.forward``, targets).

    ``src_rows`` already end with the source [EOS]; the decoder reads "[BOS] y" and is trained to
    write "y [EOS]"; padded target positions are IGNORE.
    """
    from attnviz.tasks.base import IGNORE

    src = torch.from_numpy(pad_rows(src_rows, src_pad))  # (B, Ts)
    dec_in = torch.from_numpy(pad_rows([[bos] + list(t) for t in tgt_rows], tgt_pad))  # (B, Tt)
    targets = torch.from_numpy(pad_rows([list(t) + [eos] for t in tgt_rows], IGNORE))  # (B, Tt)
    # right padding of the target needs no mask: causal self-attention never looks ahead
    return {"src": src, "tgt": dec_in, "src_pad": src == src_pad}, targets


@torch.no_grad()
def greedy_scores(model, inputs: dict, tgt_rows, bos: int, eos: int, max_new: int) -> tuple[int, int, int]:
    """Greedy-decode a batch; (exact sequences, correct tokens, gold tokens), [EOS] included.

    A sequence is exact when its output up to and including the first [EOS] equals the gold one.
    """
    out = model.generate(inputs["src"], bos=bos, eos=eos, max_new=max_new, src_pad=inputs["src_pad"])
    exact = ok = total = 0
    for row, gold in zip(out[:, 1:].cpu().tolist(), tgt_rows):
        want = list(gold) + [eos]
        got = row[: row.index(eos) + 1] if eos in row else row
        exact += got == want
        ok += sum(a == b for a, b in zip(got, want))
        total += len(want)
    return exact, ok, total
