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
    metrics = bench.task_metrics(scene.model, seed)
    ok = (here == 1.0 or mask is None) and metrics["pointing_game"] >= 0.9 and \
        metrics["pointing_game"] > metrics["pointing_chance"]
    line = (f"rollout peaks {'on' if here == 1.0 else 'off'} the shape here (patch {peak[0]},{peak[1]}); pointing game "
            f"{metrics['pointing_game']:.1%} on {metrics['n_test']} fresh held-out scenes, chance "
            f"{metrics['pointing_chance']:.1%}")
    return ClaimResult("rollout-pointing", here, metrics["pointing_game"], ok, line,
                       {"here": here, "held": metrics["pointing_game"], "chance": metrics["pointing_chance"],
                        "n": metrics["n_test"]})
