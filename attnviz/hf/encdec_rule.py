"""The score rule of an encoder–decoder's attention call recorded on the fast kernel (no (H, T, T) array kept).

T5 hands its attention function a ``position_bias`` beside the mask: in self-attention the relative position bias
of the stack's first layer (every layer of the stack reuses that tensor), in cross-attention zeros. The fast
recording joins it to the mask (the kernel takes one additive map), so the call's ``mask`` is bias + mask and its
``bias`` the ``position_bias``. Here the two are told apart again:

- the blocked cells (padding, the causal rule of decoder self-attention) as :func:`blocked_description` states them
  (a rule, or packed bits), with the causal flag the kernel applied itself;
- the bias as T5's bucket table and rule (:func:`attnviz.capture.on_demand.t5_buckets`) when the stack has one and
  the rule reproduces the bias the model computed (checked on a few rows, within 1e-5 of the largest entry); a bias
  of zeros (cross-attention) as none; any other bias as a stored (H, Tq, Tk) array up to ``MAX_BIAS_T`` positions.

BART, Marian and their kin pass no ``position_bias``: their calls get the blocked cells alone.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from attnviz.capture.on_demand import ScoreRule
from attnviz.errors import InputError
from attnviz.hf.score_rule import MAX_BIAS_T, blocked_description, tensor_key

__all__ = ["relative_table", "seed_rule", "RelativeTable"]

_CHECK_ROWS = 3  # rows of the model's own bias compared with the bucket rule (a wrong rule is wrong everywhere)


class RelativeTable:
    """One stack's relative-position table (n_buckets, H) and the facts of its bucket rule."""

    def __init__(self, table: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int):
        self.table = table
        self.rule = {"bidirectional": bool(bidirectional), "num_buckets": int(num_buckets),
                     "max_distance": int(max_distance)}

    def matches(self, bias: torch.Tensor) -> bool:
        """Whether the bucket rule gives the model's own ``bias`` (1|B, H, Tq, Tk) on a few rows and every column."""
        b = bias.reshape(-1, *bias.shape[-3:])[0]  # (H, Tq, Tk)
        H, tq, tk = b.shape
        if self.table.shape[1] != H:
            return False
        rows = np.unique(np.array([0, tq // 2, tq - 1][:_CHECK_ROWS]))
        got = ScoreRule(scale=1.0, rel_table=self.table, rel_rule=self.rule).added(np.arange(H), rows, np.arange(tk))
        want = b[:, torch.from_numpy(rows)].double().cpu().numpy()
        return bool(np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max())))


def relative_table(stack: nn.Module) -> RelativeTable | None:
    """The relative-position table of one stack (T5: the first layer's ``relative_attention_bias``), or None."""
    for module in stack.modules():
        emb = getattr(module, "relative_attention_bias", None)
        if isinstance(emb, nn.Embedding) and getattr(module, "has_relative_attention_bias", True):
            return RelativeTable(emb.weight.detach().float().cpu().numpy(), not bool(getattr(module, "is_decoder", False)),
                                 int(module.relative_attention_num_buckets), int(module.relative_attention_max_distance))
    return None


def _zero(t: torch.Tensor) -> bool:
    return not bool(t.any())


def _once(seen: dict, key, compute):
    """A fact about a tensor, computed once per tensor (the calls keep it alive, so its storage stays its own)."""
    if key not in seen:
        seen[key] = compute()
    return seen[key]


def seed_rule(call, seen: dict, table: RelativeTable | None) -> RelativeTable | None:
    """Describe ``call``'s blocked cells and bias in ``seen`` (the form :func:`attnviz.hf.score_rule.rule_of` reads:
    the mask's :func:`~attnviz.hf.score_rule.tensor_key` → (blocked description, stored bias or None)); returns the table whose bucket rule gives the
    call's bias (the caller adds it to the layer's rule), or None."""
    if call.mask is None:  # nothing added (BART without padding): rule_of takes the kernel's causal flag
        return None
    tq, tk = int(call.lse.shape[-1]), int(call.key.shape[-2])
    bias = call.bias if isinstance(getattr(call, "bias", None), torch.Tensor) else None
    # T5 hands every layer of a stack a new view of one bias: keyed by storage, each fact is found once per stack
    zero = bias is None or _once(seen, ("zero", tensor_key(bias)), lambda: _zero(bias))
    use_table = not zero and table is not None and _once(seen, ("table", tensor_key(bias)),
                                                         lambda: table.matches(bias))
    key = tensor_key(call.mask)
    if key not in seen:
        blocked = blocked_description(call.mask, tq, tk, call.sliding_window)
        if call.is_causal:  # the kernel applied the causal rule beside the mask (T5's decoder, no padding)
            blocked = {**blocked, "causal": True}
        stored = None
        if not zero and not use_table:
            if max(tq, tk) > MAX_BIAS_T:
                raise InputError(f"this model adds a bias to every attention score that attnviz cannot recompute; it "
                                 f"keeps it as a (heads, T, T) array, up to {MAX_BIAS_T:,} tokens (this input has "
                                 f"{max(tq, tk):,})")
            stored = bias.reshape(-1, *bias.shape[-3:])[0].float().cpu().numpy()
        seen[key] = (blocked, stored)
    return table if use_table else None
