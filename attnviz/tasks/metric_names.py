"""Human names for the metric keys tasks report (``task.evaluate`` → {"anti_diagonal_layer_mean": …}).

The keys stay as they are in ``config.json`` and ``attnviz eval --json``; screens show these names. Qt-free,
shared by the model panel and the training tab. Fractions of 1 are shown as percentages, indices (layer,
head) as plain integers, losses with three decimals.
"""

from __future__ import annotations

import math

__all__ = ["METRIC_NAMES", "metric_name", "format_metric", "format_metrics"]

# key → (name on screen, kind); kind: "share" (a fraction shown as %), "index", "count", "nats"
METRIC_NAMES: dict[str, tuple[str, str]] = {
    "accuracy": ("accuracy", "share"),
    "exact": ("exact sequences", "share"),
    "token_accuracy": ("token accuracy", "share"),
    "n_eval": ("held-out examples", "count"),
    "n_test": ("held-out examples", "count"),
    "n_sentences": ("held-out sentences", "count"),
    "n_chars": ("held-out characters", "count"),
    # coref
    "it_attention": ("\"it\" attends to its noun (lecture head, test sentences)", "share"),
    "it_attention_layer": ("best \"it\" head: layer", "index"),
    "it_attention_head": ("best \"it\" head: head", "index"),
    "focus_layer": ("lecture head (chosen on validation data): layer", "index"),
    "focus_head": ("lecture head (chosen on validation data): head", "index"),
    "focus_val_share": ("lecture head: \"it\" attends to its noun (validation)", "share"),
    "probes_right": ("lecture head right on the two lecture sentences", "share"),
    "it_weight": ("lecture head: mean weight from \"it\" on its noun (test)", "share"),
    "it_weight_animate": ("… when the noun is the animal (\"tired\")", "share"),
    "it_weight_place": ("… when the noun is the place (\"wide\")", "share"),
    "others_weight": ("lecture head: mean weight from the other words on that noun", "share"),
    "deleted_weight": ("\"it\" deleted: most any head's rows put on the noun", "share"),
    "deleted_row_max": ("\"it\" deleted: most any single row of the lecture layer puts on the noun", "share"),
    "focus_margin": ("lecture head's specificity lead over the runner-up", "share"),
    # order-sentiment
    "swapped_pair_accuracy": ("accuracy on word-swapped pairs", "share"),
    "pair_both_correct": ("both sentences of a swapped pair right", "share"),
    "single_accuracy": ("accuracy on one-adjective sentences", "share"),
    "cls_on_adjective": ("[CLS] → adjective attention (best head, mean)", "share"),
    "max_deviation": ("mean largest |P − 1/T| of the last layer", "share"),
    # reverse
    "anti_diagonal": ("attends to the mirrored letter (best head)", "share"),
    "anti_diagonal_layer": ("best mirror head: layer", "index"),
    "anti_diagonal_head": ("best mirror head: head", "index"),
    "anti_diagonal_layer_mean": ("attends to the mirrored letter (best layer, heads averaged)", "share"),
    # induction
    "repeat_accuracy": ("next letter right in the repeat", "share"),
    "induction_score": ("induction-head attention (best head)", "share"),
    "induction_layer": ("induction head: layer", "index"),
    "induction_head": ("induction head: head", "index"),
    "previous_token_score": ("previous-token attention (best layer-0 head)", "share"),
    "previous_token_head": ("previous-token head (layer 0)", "index"),
    # translate
    "alignment": ("cross-attention on the aligned word (best layer)", "share"),
    "alignment_layer": ("best alignment layer", "index"),
    "alignment_best_head": ("cross-attention on the aligned word (best head)", "share"),
    "alignment_best_head_layer": ("best alignment head: layer", "index"),
    "alignment_best_head_index": ("best alignment head: head", "index"),
    # charlm
    "loss": ("held-out loss (nats per character)", "nats"),
    "bigram_loss": ("bigram baseline loss (nats)", "nats"),
    "gap_to_bigram": ("better than the bigram baseline by (nats)", "nats"),
    # masked-lm
    "masked_accuracy": ("hidden word guessed right (top-1 at [MASK])", "share"),
    "unigram_accuracy": ("the most frequent training word at the same [MASK]s", "share"),
    "gap_to_unigram": ("better than the most frequent word by", "share"),
    "it_accuracy": ("hidden pronoun guessed \"it\"", "share"),
    "it_elsewhere": ("other hidden words guessed \"it\"", "share"),
    "polarity_accuracy": ("hidden asserted adjective guessed with its polarity", "share"),
    "n_masked": ("held-out [MASK]s", "count"),
    # vision
    "pointing_game": ("pointing game (attention peak on the shape)", "share"),
    "pointing_chance": ("pointing game by chance (a random patch)", "share"),
    "pointing_raw": ("pointing game of raw last-layer [CLS] attention", "share"),
    "pointing_fixed": ("pointing game of the best fixed patch (a centre prior)", "share"),
    "offcentre_accuracy": ("accuracy on off-centre scenes (small shapes anywhere)", "share"),
    "offcentre_rollout": ("off-centre: pointing game (rollout peak on the shape)", "share"),
    "offcentre_raw": ("off-centre: pointing game of raw last-layer attention", "share"),
    "offcentre_fixed": ("off-centre: best fixed patch (chosen on other scenes)", "share"),
    "offcentre_fixed_patch": ("off-centre: that fixed patch (row-major index)", "index"),
    "offcentre_chance": ("off-centre: pointing game by chance", "share"),
    "offcentre_n": ("held-out off-centre scenes", "count"),
}


def metric_name(key: str) -> str:
    """The name shown for ``key``; an unknown key becomes words ("some_new_score" → "some new score")."""
    known = METRIC_NAMES.get(key)
    return known[0] if known else key.replace("_", " ")


def format_metric(key: str, value) -> str:
    """The value as shown: shares as percentages, indices and counts as integers, losses to 3 decimals."""
    kind = METRIC_NAMES.get(key, ("", ""))[1]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if kind == "share":
        return f"{100 * value:.1f}%"
    if kind in ("index", "count"):
        return f"{int(value):,}"
    if kind == "nats":
        return f"{value:.3f}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def format_metrics(metrics: dict | None, limit: int | None = None, counts: bool = False) -> str:
    """ "accuracy 99.2%, pointing game (…) 97.5%": the metrics with human names, in the task's order.

    ``counts`` includes the held-out set sizes; ``limit`` keeps only the first metrics.
    """
    items = [(k, v) for k, v in (metrics or {}).items()
             if counts or METRIC_NAMES.get(k, ("", ""))[1] != "count"]
    if limit is not None:
        items = items[:limit]
    return ", ".join(f"{metric_name(k)} {format_metric(k, v)}" for k, v in items)
