"""Families that compute attention themselves, on demand at long inputs: Falcon (rotary or ALiBi), Bloom (ALiBi),
GPT-Neo (unscaled scores, local windows) and MPT (ALiBi, clamped q/k/v) (Qt-free).

Their scores are fully described by what the hooks of :mod:`attnviz.hf.own_attention` read: q and k (rotated, as
the module scores them), the scale, the causal rule (GPT-Neo's local layers: a window) and, with ALiBi, a slope per
head times the key position. So a layer keeps q, k, each row's log-sum-exp and that :class:`ScoreRule` (no (H, T, T)
array), and any block of probabilities is recomputed exactly when asked. MPT's reading states its rule itself
(:func:`attnviz.hf.mpt_attention.mpt_fast`: slopes read from the bias the model built, never a (H, T, T) mask);
the others' rule is read back from the dense mask their adapter builds. The model runs its own forward without
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
from attnviz.hf.mpt_attention import mpt_fast
from attnviz.hf.own_attention import ADAPTED, OwnAttentionRecorder, _kind
from attnviz.hf.score_rule import blocked_description, finite_bias

__all__ = ["ON_DEMAND_KINDS", "OwnAttentionFastRecorder", "on_demand_possible"]

# the adapted families whose scores a ScoreRule states exactly (DeBERTa-v2's do not)
ON_DEMAND_KINDS = frozenset({"modeling_falcon.FalconAttention", "modeling_bloom.BloomAttention",
                             "modeling_gpt_neo.GPTNeoSelfAttention", "modeling_mpt.MptAttention"})
# families whose on-demand reading differs from the full one (it returns its ScoreRule as ``rule``)
FAST_ADAPTED = {"modeling_mpt.MptAttention": mpt_fast}


def on_demand_possible(modules) -> bool:
    """Whether every attention module is of a family whose scores can be recomputed from q, k and a rule."""
    return bool(modules) and all(_kind(m) in ON_DEMAND_KINDS for m in modules)


def _fit_slopes(b: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Per-head slopes of a bias (H, Tq, Tk) that is slope_h · j plus a constant per row, fitted on the last row."""
    H, tq, tk = b.shape
    jj = np.arange(tk, dtype=np.float64)[allowed[tq - 1]]
    if jj.size < 2:
        return np.zeros(H)
    rel = b[:, tq - 1, allowed[tq - 1]] - b[:, tq - 1, allowed[tq - 1]][:, :1]  # the row's constant removed
    return (rel * (jj - jj[0])).sum(1) / ((jj - jj[0]) ** 2).sum()


def _states(rule: ScoreRule, b: np.ndarray, allowed: np.ndarray) -> bool:
    """Whether ``rule``'s bias equals ``b`` (H, Tq, Tk) up to a constant per row (which softmax ignores), on three
    rows over the keys each may attend to."""
    H, tq, tk = b.shape
    for i in sorted({0, tq // 2, tq - 1}):
        vis = np.flatnonzero(allowed[i])
        if vis.size < 2:
            continue
        want = b[:, i, vis] - b[:, i, vis][:, :1]
        got = rule.added(np.arange(H), np.array([i]), vis)[:, 0]
        got = got - got[:, :1]
        if np.abs(want - got).max() > 1e-5 * max(1.0, float(np.abs(want).max())):
            return False
    return True


def _rule(call: AttentionCall, raw_alibi: np.ndarray | None = None) -> ScoreRule:
    """The ScoreRule of an adapter-built call from its dense additive mask (causal / window / bits + ALiBi).
    ``raw_alibi``: the module's own slopes, tried as Falcon computes ALiBi (in bfloat16: positions above 256
    rounded, times a factor fitted on the last row) when plain slope · j does not state the bias."""
    tq, tk = int(call.query.shape[-2]), int(call.key.shape[-2])
    H = int(call.query.shape[1])
    base = dict(scale=float(call.scaling))
    if call.mask is None:
        return ScoreRule(**base, causal=True, window=call.sliding_window)
    blocked = blocked_description(call.mask, tq, tk, call.sliding_window)
    base.update(causal=bool(blocked.get("causal")), window=blocked.get("window"),
                blocked_bits=blocked.get("blocked_bits"))
    bias = finite_bias(call.mask)  # (1|H, Tq, Tk) or None
    if bias is None:
        return ScoreRule(**base)
    gone = ScoreRule(**base).blocked(np.arange(tq), np.arange(tk), tk)
    allowed = np.ones((tq, tk), bool) if gone is None else ~gone
    b = torch.broadcast_to(bias, (H, tq, tk)).double().cpu().numpy()
    candidates = [ScoreRule(**base, alibi=_fit_slopes(b, allowed))]
    if raw_alibi is not None:  # the factor fitted too: transformers' Falcon also folds ALiBi into its mask
        unit = ScoreRule(**base, alibi=raw_alibi, alibi_bf16=True)
        vis = np.flatnonzero(allowed[tq - 1])
        got = unit.added(np.arange(H), np.array([tq - 1]), vis)[:, 0]
        got, want = got - got[:, :1], b[:, tq - 1, vis] - b[:, tq - 1, vis][:, :1]
        factor = float((got * want).sum() / max((got * got).sum(), 1e-300))
        candidates.append(ScoreRule(**base, alibi=raw_alibi, alibi_bf16=True, alibi_scale=factor))
    for rule in candidates:
        if _states(rule, b, allowed):
            return rule
    raise ValueError("the bias is not ALiBi")


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


def _raw_alibi(bound: dict, H: int) -> np.ndarray | None:
    """Per-head slopes from the ``alibi`` tensor the module received ((B, H, 1, T) or (B·H, 1, T): slope ·
    position; position 1 is the slope itself), or None."""
    alibi = bound.get("alibi")
    if not isinstance(alibi, torch.Tensor) or alibi.shape[-1] < 2:
        return None
    return alibi.reshape(-1, H, alibi.shape[-1])[0, :, 1].float().cpu().numpy()


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
        adapter = FAST_ADAPTED.get(_kind(module), adapter)
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
        rule = built.pop("rule", None)
        for key, value in built.items():
            setattr(call, key, value.detach() if isinstance(value, torch.Tensor) else value)
        call.proj = dict(proj)
        try:
            rule = rule if rule is not None else _rule(call, _raw_alibi(bound, int(call.query.shape[1])))
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
