"""Claims about where a named head looks on the task's data: "it" → its referent (coref) and the
cross-attention alignment of a translation. Qt-free."""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError
from attnviz.lessons.claim_result import ClaimResult

__all__ = ["attends_to", "cross_alignment"]


def attends_to(scene, bench, trace, state, p, seed, n):
    loaded = bench.model(scene.model)
    tokens = [t.lower() for t in trace.tokens]
    target = str(p["target"]).lower()
    if target not in tokens:
        raise InputError(f"the claim's target {target!r} is not a token of the scene's input")
    row = np.asarray(trace[f"L{state.layer}.probs"], dtype=np.float64)[state.head, state.query]
    t_idx, peak = tokens.index(target), int(np.argmax(row))
    here = float(row[t_idx])
    from attnviz.runtime import task_of

    task = task_of(loaded)
    shares, _ = task.it_hits(loaded, task.sentences("test", n, np.random.default_rng(seed)))
    held = float(shares[state.layer, state.head])
    need = float(p.get("min_share", 0.9))
    ok = peak == t_idx and held >= need
    q_tok = trace.tokens[state.query]
    line = (f"'{q_tok}' → '{target}' {here:.2f} (peak '{trace.tokens[peak]}', layer {state.layer} head {state.head}); "
            f"peaks on the right noun in {held:.1%} of {n} fresh held-out sentences (need ≥ {need:.0%})")
    return ClaimResult("attends-to", here, held, ok, line, {"here": here, "held": held, "n": n, "query": q_tok,
                                                            "target": target, "peak": trace.tokens[peak]})


def cross_alignment(scene, bench, trace, state, p, seed, n):
    pairs = trace.meta.get("alignment")
    if not pairs:
        raise InputError("the scene's sentence has no reference alignment (not a sentence of the grammar)")
    P = np.asarray(trace[f"L{state.layer}.cross.probs"], dtype=np.float64).mean(0)  # heads averaged
    here = float(np.mean([int(np.argmax(P[r]) == s) for r, s in pairs]))
    metrics = bench.task_metrics(scene.model, seed)
    held = float(metrics["alignment"])
    ok = here >= 0.8 and held >= 0.9
    line = (f"cross-attention (layer {state.layer}, heads averaged) peaks on the aligned source word for "
            f"{here:.0%} of {len(pairs)} words here, {held:.1%} over {metrics['n_eval']} fresh held-out sentences")
    return ClaimResult("cross-alignment", here, held, ok, line, {"here": here, "held": held, "n": metrics["n_eval"],
                                                                 "words": len(pairs)})
