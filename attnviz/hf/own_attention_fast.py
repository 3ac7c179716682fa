"""Families that compute attention themselves, on demand at long inputs: Falcon (rotary or ALiBi), Bloom (ALiBi) and
GPT-Neo (unscaled scores, local windows) (Qt-free).

Their scores are fully described by what the hooks of :mod:`attnviz.hf.own_attention` read: q and k (rotated, as
the module scores them), the scale, the causal rule (GPT-Neo's local layers: a window) and, with ALiBi, a slope per
head times the key position. So a layer keeps q, k, each row's log-sum-exp and that :class:`ScoreRule` (no (H, T, T)
array), and any block of probabilities is recomputed exactly when asked. The model runs its own forward without
``output_attentions`` (it computes one layer's maps at a time and returns none); the module's own kernel gives no
log-sum-exp, so attnviz computes it here from q, k and the rule (:func:`attnviz.capture.on_demand.row_lse`, float64,
row chunks: one more pass over the scores, never a stored T×T). Every call is checked: the attention output the model
computed (z, the output projection's input) must equal p·v at three query rows from the recomputed probabilities;
a call that does not is an error (these families then keep full maps, up to ``MAX_FULL_T`` tokens).

DeBERTa's disentangled terms (c2p, p2c) depend on both positions through learned tables in ways no rule here
states: it keeps full maps up to the stated length (:data:`attnviz.hf.capture.MAX_FULL_T`), and says so beyond.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.capture.on_demand import OnDemandProbs, ScoreRule, row_lse
from attnviz.errors import InputError
from attnviz.hf.attention_record import AttentionCall
from attnviz.hf.own_attention import ADAPTED, OwnAttentionRecorder, _kind
from attnviz.hf.score_rule import blocked_description, finite_bias

__all__ = ["ON_DEMAND_KINDS", "OwnAttentionFastRecorder", "on_demand_possible"]

# the adapted families whose scores a ScoreRule states exactly (DeBERTa-v2's do not)
ON_DEMAND_KINDS = frozenset({"modeling_falcon.FalconAttention", "modeling_bloom.BloomAttention",
                             "modeling_gpt_neo.GPTNeoSelfAttention"})


def on_demand_possible(modules) -> bool:
    """Whether every attention module is of a family whose scores can be recomputed from q, k and a rule."""
    return bool(modules) and all(_kind(m) in ON_DEMAND_KINDS for m in modules)


def _slopes(bias: torch.Tensor, allowed: np.ndarray) -> np.ndarray | None:
    """Per-head ALiBi slopes of a finite bias (H, Tq, Tk) that is slope_h · j plus a constant per row (which
    softmax ignores), checked on three rows over the keys each may attend to; None when it is not of that form."""
    b = bias.double().cpu().numpy()
    H, tq, tk = b.shape
    j = np.arange(tk, dtype=np.float64)
    last = tq - 1
    seen = allowed[last]
    jj = j[seen]
    if jj.size < 2:
        return np.zeros(H)
    rel = b[:, last, seen] - b[:, last, seen][:, :1]  # (H, n): remove the row's constant
    slopes = (rel * (jj - jj[0])).sum(1) / max(((jj - jj[0]) ** 2).sum(), 1.0)
    for i in sorted({0, tq // 2, last}):
        vis = allowed[i]
        if vis.sum() < 1:
            continue
        want = b[:, i, vis] - b[:, i, vis][:, :1]
        got = slopes[:, None] * (j[vis] - j[vis][0])[None]
        if np.abs(want - got).max() > 1e-5 * max(1.0, float(np.abs(want).max())):
            return None
    return slopes


def _rule(call: AttentionCall) -> ScoreRule:
    """The ScoreRule of an adapter-built call from its dense additive mask (causal / window / bits + ALiBi)."""
    tq, tk = int(call.query.shape[-2]), int(call.key.shape[-2])
    H = int(call.query.shape[1])
    mask = call.mask
    if mask is None:
        return ScoreRule(scale=float(call.scaling), causal=True, window=call.sliding_window)
    blocked = blocked_description(mask, tq, tk, call.sliding_window)
    bias = finite_bias(mask)  # (1|H, Tq, Tk) or None
    slopes = None
    if bias is not None:
        rule = ScoreRule(scale=1.0, causal=bool(blocked.get("causal")), window=blocked.get("window"),
                         blocked_bits=blocked.get("blocked_bits"))
        gone = rule.blocked(np.arange(tq), np.arange(tk), tk)
        allowed = np.ones((tq, tk), bool) if gone is None else ~gone
        slopes = _slopes(torch.broadcast_to(bias, (H, tq, tk)), allowed)
        if slopes is None:
            raise ValueError("the bias is not ALiBi")
    return ScoreRule(scale=float(call.scaling), causal=bool(blocked.get("causal")), window=blocked.get("window"),
                     blocked_bits=blocked.get("blocked_bits"),
                     alibi=None if slopes is None else slopes.astype(np.float64))


def _check(call: AttentionCall, probs: OnDemandProbs) -> bool:
    """p·v at three query rows equals the attention output the model computed (z)."""
    tq = probs.shape[1]
    rows = np.array(sorted({0, tq // 2, tq - 1}))
    p = probs.block(rows=rows).astype(np.float64)  # (H, r, Tk)
    v = call.value[0].double().cpu().numpy()  # (H_kv, Tk, dh)
    v = np.repeat(v, p.shape[0] // v.shape[0], axis=0)
    got = np.matmul(p, v)  # (H, r, dh)
    want = call.z[0].double().cpu().numpy()[rows].transpose(1, 0, 2)  # (T, H, dh) → (H, r, dh)
    return bool(np.abs(got - want).max() <= 1e-4 * max(1.0, float(np.abs(want).max())))


class OwnAttentionFastRecorder(OwnAttentionRecorder):
    """:class:`~attnviz.hf.own_attention.OwnAttentionRecorder` for a forward run without ``output_attentions``:
    every call keeps q, k, each row's log-sum-exp and its rule (``call.rule``), its probabilities a shape-only
    tensor; calls ``keep`` rejects keep nothing else."""

    def _leave(self, module, args, out):
        bound, proj = self._pending.pop(id(module), ({}, {}))
        name = self.names.get(id(module), type(module).__name__)
        call = AttentionCall(module=module, name=name, index=len(self.calls), layer=getattr(module, "layer_idx", None),
                             kept=self.keep is None or bool(self.keep(name)))
        adapter, children = ADAPTED[_kind(module)]
        built = None
        if all(c in proj for c in children):
            with torch.no_grad():
                try:
                    built = adapter(module, {k: (v.detach() if isinstance(v, torch.Tensor) else v)
                                             for k, v in bound.items()}, proj, out)
                except (KeyError, TypeError, ValueError, RuntimeError, AttributeError):
                    built = None
        if built is None:
            raise InputError(f"{name}: attnviz could not read this layer's queries and keys, so its attention "
                             "cannot be recomputed at this length")
        call.columns = built.pop("columns", None)
        for key, value in built.items():
            setattr(call, key, value.detach() if isinstance(value, torch.Tensor) else value)
        call.proj = dict(proj)
        try:
            rule = _rule(call)
        except ValueError:
            raise InputError(f"{name}: the scores' additions are not a rule attnviz can recompute (causal, window, "
                             "ALiBi)") from None
        q, k = call.query[0].float().cpu().numpy(), call.key[0].float().cpu().numpy()
        lse = row_lse(q, k, rule)  # (H, Tq)
        probs = OnDemandProbs(q, k, lse, rule)
        if not _check(call, probs):
            raise InputError(f"{name}: probabilities recomputed from its queries and keys do not give the output the "
                             "model computed; attnviz cannot show this layer on demand")
        call.rule, call.mask, call.is_causal = rule, None, rule.causal
        call.lse = torch.from_numpy(lse)[None]
        call.probs = torch.empty((1, q.shape[0], q.shape[1], k.shape[1]), device="meta")  # the shape alone
        self.calls.append(call)
