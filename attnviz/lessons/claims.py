"""Claims a lesson scene makes, measured on the spot: on the scene's own input and on fresh held-out data.

A claim is ``{"kind": KIND, ...parameters}`` in a scene. :func:`evaluate_claim` runs the model, computes
the number the caption states and returns a :class:`ClaimResult` with a one-line verdict. Nothing here
is stored or hard-coded: every number is recomputed from the model each time (numpy recomputations of
the recorded arrays, what-if re-runs, held-out data the task generates with a seed never used in
training or in the stored metrics).

The evaluators live by figure: :mod:`~attnviz.lessons.claims_mechanism` (six steps, matrix form,
concat · W_O, causal mask, √d_k), :mod:`~attnviz.lessons.claims_order` (permutation, word order,
sinusoidal positions), :mod:`~attnviz.lessons.claims_focus` ("it" → referent, cross-attention
alignment) and :mod:`~attnviz.lessons.claims_vision` (patch-filter PCA, rollout). Qt-free.
"""

from __future__ import annotations

from attnviz.errors import InputError
from attnviz.lessons import (claims_cost, claims_focus, claims_masked, claims_mechanism, claims_order,
                             claims_path, claims_scale, claims_vision)
from attnviz.lessons.claim_result import ClaimResult, format_caption
from attnviz.lessons.workbench import HELD_OUT_SEED, Workbench, fresh_texts, scene_selection

__all__ = ["ClaimResult", "Workbench", "evaluate_claim", "CLAIMS", "HELD_OUT_SEED", "fresh_texts",
           "scene_selection", "format_caption"]

CLAIMS = {
    "attends-to": claims_focus.attends_to, "six-steps": claims_mechanism.six_steps,
    "matrix-form": claims_mechanism.matrix_form, "concat-heads": claims_mechanism.concat_heads,
    "causal-mask": claims_mechanism.causal_mask, "scale-saturation": claims_mechanism.scale_saturation,
    "permutation": claims_order.permutation, "word-order": claims_order.word_order,
    "sinusoidal": claims_order.sinusoidal, "filters-pca": claims_vision.filters_pca,
    "rollout-pointing": claims_vision.rollout_pointing, "cross-alignment": claims_focus.cross_alignment,
    "attention-cost": claims_cost.attention_cost,
    "scale-training": claims_scale.scale_training, "path-length": claims_path.path_length,
    "masked-lm": claims_masked.masked_lm,
}


def evaluate_claim(scene, bench: Workbench | None = None, trace=None, seed: int = HELD_OUT_SEED,
                   n: int = 200) -> ClaimResult:
    """Measure ``scene.claim`` on the scene's input and on ``n`` fresh held-out examples (``seed``).

    Raises InputError when the scene has no claim or names an unknown kind.
    """
    if not scene.claim:
        raise InputError("the scene makes no claim")
    kind = scene.claim.get("kind")
    if kind not in CLAIMS:
        raise InputError(f"unknown claim kind {kind!r}: one of {', '.join(CLAIMS)}")
    bench = bench or Workbench()
    trace = trace if trace is not None else bench.trace(scene)
    state = scene_selection(scene, trace)
    return CLAIMS[kind](scene, bench, trace, state, scene.claim, seed, n)
