"""Claims about a vision transformer: smooth patch-embedding filters (the ViT paper's PCA figure) and
attention rollout that points at the object. Qt-free."""

from __future__ import annotations

import numpy as np

from attnviz.lessons.claim_result import ClaimResult

__all__ = ["filters_pca", "rollout_pointing"]


def filters_pca(scene, bench, trace, state, p, seed, n):
    from attnviz.analysis.filter_smoothness import filter_smoothness, noise_share
    from attnviz.analysis.pca import compute_filter_pca
    from attnviz.runtime import task_of

    loaded = bench.model(scene.model)
    comps, ratio = compute_filter_pca(np.asarray(trace["emb.patch_weight"]), k=int(p.get("k", 28)))
    # the top 16: the four strongest alone passed an old model whose filters looked like colour noise
    top = min(int(p.get("top", 16)), len(comps))
    smooth = filter_smoothness(comps, top)
    P = comps.shape[1]
    chance_smooth = noise_share(P)
    task = task_of(loaded)
    metrics = bench.task_metrics(scene.model, seed)
    ok = smooth >= float(p.get("min_smooth", 0.7)) and metrics["accuracy"] >= 0.97
    line = (f"top {top} of {len(ratio)} components: {smooth:.0%} of their energy in low spatial frequencies "
            f"(white noise: {chance_smooth:.0%}); they explain {ratio[:top].sum():.1%} of the filters' variance; "
            f"{P}×{P} patches; accuracy {metrics['accuracy']:.1%} on {metrics['n_test']} fresh held-out scenes "
            f"(chance {1 / len(task.labels):.0%})")
    return ClaimResult("filters-pca", smooth, metrics["accuracy"], ok, line,
                       {"here": smooth, "held": metrics["accuracy"], "noise": chance_smooth, "patch": P,
                        "top_share": float(ratio[:top].sum()), "n": metrics["n_test"]})


def rollout_pointing(scene, bench, trace, state, p, seed, n):
    from attnviz.runtime import task_of
    from attnviz.tasks.pointing import patch_hits

    loaded = bench.model(scene.model)
    task = task_of(loaded)
    grid = trace.grid
    roll = np.asarray(trace["rollout"], dtype=np.float64)[0, 1:].reshape(grid)  # [CLS] row over the patches
    peak = np.unravel_index(int(np.argmax(roll)), grid)
    mask = task.probe_mask(int(p["label"])) if "label" in p else None
    here = float(patch_hits(np.array([peak[0] * grid[1] + peak[1]]), mask[None], loaded.config.patch_size)[0]) \
        if mask is not None else float("nan")
    m = bench.task_metrics(scene.model, seed)
    # rollout must beat the best model-free pointer (one fixed patch for every scene: a centre prior at
    # best), also on the scenes whose object misses that patch, where the prior scores nothing
    ok = (here == 1.0 or mask is None) and m["pointing_game"] >= 0.9 and m["pointing_game"] > m["pointing_chance"] \
        and m["pointing_game"] > m["pointing_fixed"] and m["offcentre_n"] > 0 \
        and m["offcentre_rollout"] > m["offcentre_fixed"] and m["offcentre_rollout"] >= 0.8
    line = (f"rollout peaks {'on' if here == 1.0 else 'off'} the shape here (patch {peak[0]},{peak[1]}); pointing game "
            f"{m['pointing_game']:.1%} on {m['n_test']} fresh held-out scenes: random patch {m['pointing_chance']:.1%}, "
            f"best fixed patch {m['pointing_fixed']:.1%}, raw last-layer [CLS] attention {m['pointing_raw']:.1%}; on the "
            f"{m['offcentre_n']} scenes whose shape misses that patch: rollout {m['offcentre_rollout']:.1%}, raw "
            f"{m['offcentre_raw']:.1%}, best fixed patch {m['offcentre_fixed']:.1%}")
    return ClaimResult("rollout-pointing", here, m["pointing_game"], ok, line,
                       {"here": here, "held": m["pointing_game"], "chance": m["pointing_chance"], "n": m["n_test"],
                        "fixed": m["pointing_fixed"], "raw": m["pointing_raw"], "off_n": m["offcentre_n"],
                        "off_rollout": m["offcentre_rollout"], "off_raw": m["offcentre_raw"],
                        "off_fixed": m["offcentre_fixed"]})
