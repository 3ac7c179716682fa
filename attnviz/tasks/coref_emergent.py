"""``coref-emergent``: the coref task with no loss on attention; the pronoun head emerges.

The bundled ``coref`` model adds a pointer loss on one last-layer head (:mod:`attnviz.tasks.coref`);
trained without it, that recipe still answers 100 % of held-out sentences while no head resolves
"it": two layer-0 heads fetch *both* candidate nouns (one looks at the animate noun, one at the
place, whatever the adjective) and the MLP picks one by the adjective (measured: the pronoun row's
weight on the right noun ≈ 0.44 in every head of the last layer, 0.9 when the referent is animate
and ≈ 0 when it is a place).

The task is the same (every word names its referent: "it" → the noun, a noun → itself, the rest
→ none); what changes is the model, so that the detour is closed and reading the referent where
"it" stands is the only route left:

* one head per layer: layer 0's single head must spend its row at "it" on the adjective (which
  decides), so it cannot also carry both nouns there;
* a narrow MLP (``mlp_ratio`` 0.25: 16 hidden units): too small to gate two fetched nouns by the
  adjective, the step the detour needs.

The last layer's head then learns, from the answer loss alone, to look from "it" at the noun the
adjective selects. How the recipe was found (seed 1; these exploratory runs were measured on 400
sentences of the *test* combinations, so the held-out figures of this model are not fully untouched
by that choice; no weights or thresholds were fitted to them): 4 heads with the full MLP took the
detour (last-layer "it" row 0.41–0.46 on the noun); 4 heads with the narrow MLP half way (0.51–0.71);
2 heads with the narrow MLP the detour again (≤ 0.14); 1 head with the narrow MLP resolved it (0.991
after 800 steps, 0.996 after 1500, when also no row but the noun's own put more than 0.16 on the noun
with "it" deleted; 0.45 after 800 steps).

**It depends on the seed.** Seed 2 of this same recipe (same task, model and steps) also answers 100 % of
held-out sentences but does not resolve "it" in any head: whether the pronoun head emerges is a property
of this one run, not a guarantee of the recipe. The bundled model is seed 1; the lesson's caption says what
was trained and what emerged, and ``attnviz lesson check`` measures the model it is given, so a re-trained
model with another seed is checked, not assumed.
"""

from __future__ import annotations

from attnviz.models.config import ModelConfig
from attnviz.tasks.coref import CorefTask

__all__ = ["CorefEmergentTask"]


class CorefEmergentTask(CorefTask):
    name = "coref-emergent"
    description = ('Which noun does "it" refer to? The same task as coref, trained with no loss on attention: '
                   'the model only names every word\'s referent; one head per layer and a narrow MLP leave '
                   'attention as the only route, and the last layer\'s head learns to point by itself. '
                   'In this run (seed 1): seed 2 of the same recipe is as accurate but resolves "it" in no head.')
    asset_seed = 1
    steps = 1500
    pointer_head = -1  # no head is trained to point
    targets = {"accuracy": (">=", 0.99), "it_attention": (">=", 0.95), "it_weight": (">=", 0.8),
               "others_weight": ("<=", 0.1), "deleted_row_max": ("<=", 0.3), "probes_right": (">=", 1.0)}

    def model_config(self, **overrides) -> ModelConfig:
        return super().model_config(**{"n_heads": 1, "mlp_ratio": 0.25, **overrides})

    def prepare_model(self, model) -> None:
        """Nothing: no head is watched and :meth:`CorefTask.loss` is the answer loss alone."""
