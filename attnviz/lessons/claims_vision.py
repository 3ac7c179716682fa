"""Claims about a vision transformer: smooth patch-embedding filters (the ViT paper's PCA figure) and
attention rollout that points at the object. Qt-free."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.share_versus import versus

from attnviz.errors import InputError
from attnviz.lessons.claim_result import ClaimResult
from attnviz.vision.shape_scenes import LAYOUTS

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
            f"{P}×{P}-pixel patches; accuracy {metrics['accuracy']:.1%} on {metrics['n_test']} fresh held-out scenes "
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
    layout = p.get("layout", "large")
    if layout not in LAYOUTS:  # a shared lesson file names it: a clear line, not a traceback
        raise InputError(f"rollout-pointing: layout must be one of {', '.join(LAYOUTS)}, not {str(layout)[:40]!r}")
    mask = task.probe_mask(int(p["label"]), layout) if "label" in p else None
    here = float(patch_hits(np.array([peak[0] * grid[1] + peak[1]]), mask[None], loaded.config.patch_size)[0]) \
        if mask is not None else float("nan")
    m = bench.task_metrics(scene.model, seed)
    # On the usual scenes every shape covers a central patch: one fixed patch for every scene scores ~90 % with no
    # model at all. So the verdict is taken on "offcentre" scenes (small shapes anywhere), where rollout must beat
    # the best fixed patch (chosen on other such scenes: an upper bound of any centre prior) by ``margin``.
    margin = float(p.get("margin", 0.25))
    off_lead = m["offcentre_rollout"] - m["offcentre_fixed"]
    ok = (here == 1.0 or mask is None) and m["pointing_game"] >= 0.9 and m["offcentre_rollout"] >= 0.8 \
        and off_lead >= margin and m["offcentre_rollout"] > m["offcentre_chance"]
    vs_raw = versus(m["offcentre_rollout"], m["offcentre_raw"], m["offcentre_n"])
    line = (f"rollout peaks {'on' if here == 1.0 else 'off'} the shape here (patch {peak[0]},{peak[1]}); on "
            f"{m['offcentre_n']} fresh off-centre scenes (small shapes anywhere; the model names {m['offcentre_accuracy']:.1%}): "
            f"rollout {m['offcentre_rollout']:.1%}, raw last-layer [CLS] attention {m['offcentre_raw']:.1%} ({vs_raw}), "
            f"best fixed patch {m['offcentre_fixed']:.1%} (lead {off_lead:+.1%}, needs ≥ {margin:.0%}), random patch "
            f"{m['offcentre_chance']:.1%}; on {m['n_test']} large central shapes: rollout {m['pointing_game']:.1%}, "
            f"fixed patch {m['pointing_fixed']:.1%}, raw {m['pointing_raw']:.1%}, random {m['pointing_chance']:.1%}")
    return ClaimResult("rollout-pointing", here, m["offcentre_rollout"], ok, line,
                       {"here": here, "held": m["offcentre_rollout"], "n": m["offcentre_n"],
                        "chance": m["offcentre_chance"], "fixed": m["offcentre_fixed"], "raw": m["offcentre_raw"],
                        "lead": off_lead, "margin": margin, "vs_raw": vs_raw, "accuracy": m["offcentre_accuracy"],
                        "large_held": m["pointing_game"], "large_n": m["n_test"], "large_fixed": m["pointing_fixed"],
                        "large_raw": m["pointing_raw"], "large_chance": m["pointing_chance"]})


# On the bundled 3-layer shapes model rollout and raw last-layer attention tie on off-centre scenes (99.2 vs 99.0 %,
# lesson check seed); a 6-layer model of the same recipe (seed 0, 2,000 steps, not shipped; issue 37) tied too
# (98.5 vs 98.0 % on the 1,000 scenes of the stored-metrics seed): the lesson and the figure say so
