"""Claims about where a named head looks on the task's data: "it" → its referent (coref) and the
cross-attention alignment of a translation. Qt-free."""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError
from attnviz.lessons.claim_result import ClaimResult

__all__ = ["attends_to", "cross_alignment"]


def attends_to(scene, bench, trace, state, p, seed, n):
    """The query row peaks on ``target`` here, and on fresh held-out sentences the head resolves the
    pronoun *specifically*: its row weight on the referent ≥ ``min_weight`` with the argmax right on
    ≥ ``min_share``, the other rows ≤ ``max_others`` on that noun (mean), and with "it" deleted no
    single row of any head of the scene's layer puts more than ``max_deleted`` on it, over every
    sentence (the noun's own row excepted: :mod:`attnviz.tasks.coref_metrics`). An answer broadcast,
    every row on the answer noun, fails the last two; so does one head that still fetches the noun
    from one row when there is no pronoun."""
    from attnviz.runtime import task_of
    from attnviz.tasks.coref_metrics import head_profile, pick_head

    loaded = bench.model(scene.model)
    tokens = [t.lower() for t in trace.tokens]
    target = str(p["target"]).lower()
    if target not in tokens:
        raise InputError(f"the claim's target {target!r} is not a token of the scene's input")
    row = np.asarray(trace[f"L{state.layer}.probs"], dtype=np.float64)[state.head, state.query]
    t_idx, peak = tokens.index(target), int(np.argmax(row))
    here = float(row[t_idx])
    task = task_of(loaded)
    if task is None or not hasattr(task, "sentences"):
        raise InputError(f"{scene.model} names no task with held-out sentences to check the claim on")
    at = (state.layer, state.head)
    test = head_profile(loaded, task, task.sentences("test", n, np.random.default_rng(seed)))
    # the head is chosen by a continuous score on validation sentences: say by how much it leads
    best_layer, best_head, margin = pick_head(head_profile(loaded, task, task.sentences("val", n,
                                                                                          np.random.default_rng(seed + 1))))
    held, weight = float(test["it_hits"][at]), float(test["it_weight"][at])
    others = float(test["others_weight"][at])
    deleted = float(test["deleted_row_max"][state.layer].max())  # every head of the layer, every row
    worst = int(np.argmax(test["deleted_row_max"][state.layer]))
    need = float(p.get("min_share", 0.9))
    min_w, max_o = float(p.get("min_weight", 0.5)), float(p.get("max_others", 0.3))
    max_d = float(p.get("max_deleted", 0.3))
    ok = peak == t_idx and held >= need and weight >= min_w and others <= max_o and deleted <= max_d
    q_tok = trace.tokens[state.query]
    chosen = (f"the most specific head on {n} validation sentences, by {margin:.3f}"
              if (best_layer, best_head) == at else f"not the most specific head (L{best_layer}H{best_head} is)")
    line = (f"'{q_tok}' → '{target}' {here:.2f} (peak '{trace.tokens[peak]}', layer {state.layer} head {state.head}, "
            f"{chosen}); over {n} fresh held-out sentences the '{q_tok}' row puts {weight:.2f} on its noun and "
            f"peaks there in {held:.1%} (need ≥ {min_w:.2f}, ≥ {need:.0%}); the other rows put {others:.2f} on it "
            f"({float(test['others_not_self'][at]):.3f} without the noun's own row) "
            f"(need ≤ {max_o:.2f}); with '{q_tok}' deleted, no single row of any head of layer {state.layer} puts more "
            f"than {deleted:.2f} on it (head {worst}; need ≤ {max_d:.2f}, the noun's own row excepted)")
    return ClaimResult("attends-to", here, held, ok, line,
                       {"here": here, "held": held, "n": n, "query": q_tok, "target": target,
                        "peak": trace.tokens[peak], "weight": weight, "others": others, "deleted": deleted,
                        "margin": margin, "layer": state.layer, "head": state.head, "deleted_head": worst,
                        "others_rest": float(test["others_not_self"][at]),
                        "pointer_head": int(getattr(task, "pointer_head", -1))})


def cross_alignment(scene, bench, trace, state, p, seed, n):
    """The alignment of the head on screen when it is the model's best single head (both numbers that head's),
    else of the scene's layer with its heads averaged (both numbers the layer's): never one measure "here" and
    another "held", and ``which`` says which it is, for the caption under a one-head map."""
    pairs = trace.description.alignment
    if not pairs:
        raise InputError("the scene's sentence has no reference alignment (not a sentence of the grammar)")
    metrics = bench.task_metrics(scene.model, seed)
    probs = np.asarray(trace[f"L{state.layer}.cross.probs"], dtype=np.float64)
    best = (int(metrics["alignment_best_head_layer"]), int(metrics["alignment_best_head_index"]))
    if best == (state.layer, state.head):
        P, held = probs[state.head], float(metrics["alignment_best_head"])
        which = f"this head, L{state.layer}·H{state.head}, the best single head"
    else:
        P, held = probs.mean(0), float(metrics["alignment"])
        which = f"layer {state.layer}, heads averaged"
        if int(metrics["alignment_layer"]) != state.layer:
            which += f" (held out: the best layer, {int(metrics['alignment_layer'])})"
    # an output shorter than the reference (a model that stopped early) gets its missing words wrong
    here = float(np.mean([int(r < len(P) and np.argmax(P[r]) == s) for r, s in pairs]))
    ok = here >= 0.8 and held >= 0.9
    line = (f"cross-attention ({which}) peaks on the aligned source word for "
            f"{here:.0%} of {len(pairs)} words here, {held:.1%} over {metrics['n_eval']} fresh held-out sentences")
    return ClaimResult("cross-alignment", here, held, ok, line, {"here": here, "held": held, "n": metrics["n_eval"],
                                                                 "words": len(pairs), "which": which})
