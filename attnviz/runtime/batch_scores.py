"""Score every head of a model over many inputs, batch by batch, keeping only running sums.

Each batch goes once through the model's explicit attention path (``attnviz.capture.record.recording``);
its probabilities are scored by :mod:`attnviz.analysis.head_scores` and dropped, so memory stays
bounded however many inputs are scored. Decoders are also run on repeated random sequences for the
induction score; classifiers get one backward pass per batch for the gradient share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from attnviz.analysis.head_scores import HeadScoreAccumulator, HeadScores, gradient_attribution, per_input_scores
from attnviz.errors import AttnvizError, InputError

__all__ = ["score_heads", "score_heads_by_trace", "score_trace", "forward_batch", "scoring_threads", "ScoringCancelled",
           "DEFAULT_N", "N_REPEATED"]

DEFAULT_N = 200  # held-out inputs when none are given
N_REPEATED = 200  # repeated random sequences for the induction score (decoders)
PART_ORDER = ("self", "enc", "cross")


def scoring_threads() -> int:
    """Torch threads for scoring: 1 unless ``ATTNVIZ_HEADS_THREADS`` says otherwise.

    These models are tiny: on a shared 2-core machine (load 9) the two-thread default made each
    64-input batch of the induction model take 0.5 s instead of 0.05 s, the threads spinning for
    each other; as with training (``ATTNVIZ_TRAIN_THREADS``), one thread is faster and steadier.
    """
    import os

    try:
        return max(1, int(os.environ.get("ATTNVIZ_HEADS_THREADS", "1")))
    except ValueError:
        return 1


class ScoringCancelled(AttnvizError):
    """The caller asked to stop (the app's Cancel); nothing is returned."""


def forward_batch(loaded, inputs: dict, grad: bool = False, keep: Iterable[str] = ("probs",)):
    """One explicit-path forward pass of a padded batch.

    Returns ``(arrays, grads)``: ``arrays[part][name]`` is a list over layers of numpy arrays for each
    recorded ``name`` in ``keep`` (``probs`` (B, H, Tq, Tk), ``q`` (B, H, Tq, dh), ``k`` (B, H_kv, Tk, dh)),
    ``grads[part]`` the per-layer d(predicted class logit)/d(probs) when ``grad`` (classifiers), else None.
    """
    from attnviz.capture.batch import record_batch

    from attnviz.runtime.pipeline import adapter_for

    if not adapter_for(loaded).batched:
        raise InputError(f"{loaded.name} records attention through hooks, one input at a time: data-set "
                         "scores need an attnviz model")
    dev_inputs = {k: v.to(loaded.device) for k, v in inputs.items()}
    _, arrays, grads = record_batch(loaded.model, dev_inputs, keep, grad=grad)
    return arrays, grads


def _image_geometry(cfg):
    """Distances between positions (pixels) and which positions are patches, for a ViT; else (None, None)."""
    if cfg.kind != "vit":
        return None, None
    from attnviz.analysis.distance import position_distances

    T = cfg.n_patches + 1
    d, off = position_distances(T, grid=cfg.grid, patch_size=cfg.patch_size)
    D = np.zeros((T, T))
    D[off:, off:] = d
    spatial = np.ones(T, dtype=bool)
    spatial[:off] = False
    return D, spatial


def _wants_gradients(loaded) -> bool:
    return loaded.config.head == "classify"


def score_heads(loaded, batches: Iterable, n_total: int | None = None, repeated: Iterable | None = None,
                progress: Callable[[int, int | None], None] | None = None,
                cancel: Callable[[], bool] | None = None, top_k: int = 8) -> HeadScores:
    """Score every head of ``loaded`` over ``batches`` (:class:`~attnviz.runtime.dataset_inputs.DatasetBatch`).

    Parameters
    ----------
    loaded : a LoadedModel of attnviz's own (the explicit attention path records whole batches).
    batches : the data set, batch by batch (see :func:`attnviz.runtime.dataset_inputs.dataset_batches`).
    n_total : how many inputs ``batches`` holds, for ``progress`` (None: unknown).
    repeated : batches of repeated random sequences: the induction score is measured on these
        (decoders); None measures it on ``batches``.
    progress : called as ``progress(done, total)`` after every batch (``total`` includes ``repeated``).
    cancel : polled between batches; True raises :class:`ScoringCancelled`.

    Returns
    -------
    :class:`~attnviz.analysis.head_scores.HeadScores`; ``meta`` names the model and the data.
    """
    cfg = loaded.config
    from attnviz.capture.batch import attention_modules

    layers = attention_modules(loaded.model)
    acc = HeadScoreAccumulator({p: (len(mods), cfg.n_heads) for p, mods in layers.items()}, top_k=top_k)
    distances, spatial = _image_geometry(cfg)
    grad = _wants_gradients(loaded)
    # induction is a decoder's circuit, measured on repeated sequences when they are given
    wanted = ("previous_token", "duplicate_token", "first_token", "entropy", "distance") + \
        (("induction",) if repeated is None and cfg.kind == "decoder" else ())
    n_rep = 0
    done = 0
    for batch in batches:
        if cancel is not None and cancel():
            raise ScoringCancelled("cancelled")
        arrays, grads = forward_batch(loaded, batch.inputs, grad=grad)
        attribution = []
        for part in PART_ORDER:
            if part not in arrays:
                continue
            masks = batch.parts[part]
            for layer, probs in enumerate(arrays[part]["probs"]):
                scores = per_input_scores(probs, masks.q_valid, masks.k_valid, masks.ids, distances, spatial, wanted)
                for name, values in scores.items():
                    acc.add_scores(part, layer, name, values, done)
                acc.add_pattern(part, layer, probs, masks.q_valid, masks.k_valid)
                if grads is not None:
                    attribution.append((part, layer, gradient_attribution(probs, grads[part][layer])))
        if attribution:
            total = sum(a for _, _, a in attribution).sum(-1)  # (B,): every head of every layer
            with np.errstate(invalid="ignore", divide="ignore"):
                for part, layer, a in attribution:
                    acc.add_scores(part, layer, "gradient_share", a / total[:, None], done)
        acc.add_inputs(done, batch.items)
        acc.prune()
        done += len(batch)
        if progress is not None:
            progress(done, None if n_total is None else n_total + (N_REPEATED if repeated is not None else 0))
    if done == 0:
        raise InputError("no inputs to score")
    if repeated is not None:
        n_rep = _score_repeated(loaded, repeated, acc, done, n_total, progress, cancel)
    meta = {"model": loaded.name, "kind": cfg.kind, "n_repeated": n_rep,
            "parts": list(layers), "n_layers": {p: len(m) for p, m in layers.items()}, "n_heads": cfg.n_heads}
    return acc.result(meta)


def _score_repeated(loaded, repeated, acc, done, n_total, progress, cancel) -> int:
    """Induction scores on repeated random sequences; their inputs get indices after the data set's."""
    rep = 0
    for batch in repeated:
        if cancel is not None and cancel():
            raise ScoringCancelled("cancelled")
        arrays, _ = forward_batch(loaded, batch.inputs)
        masks = batch.parts["self"]
        for layer, probs in enumerate(arrays["self"]["probs"]):
            scores = per_input_scores(probs, masks.q_valid, None, masks.ids, wanted=("induction",))
            acc.add_scores("self", layer, "induction", scores["induction"], done + rep)
        acc.add_inputs(done + rep, batch.items, count=False)
        acc.prune()
        rep += len(batch)
        if progress is not None:
            progress(done + rep, None if n_total is None else n_total + N_REPEATED)
    return rep


def score_heads_by_trace(loaded, items: Iterable, n_total: int | None = None,
                         progress: Callable[[int, int | None], None] | None = None,
                         cancel: Callable[[], bool] | None = None, top_k: int = 8) -> HeadScores:
    """The same scores, one input at a time through ``attnviz.runtime.run_trace``: for models that
    record attention through hooks (Hugging Face folders), which cannot run a padded batch here.

    ``items`` are texts or image paths. Repeated tokens are found by their token strings; the
    gradient share and the induction probe are left out (null). Decoders and encoders are captured on demand
    with no layer in full (q, k and each row's log-sum-exp per layer: no (H, T, T) map, no walkthrough arrays)
    and scored block by block from those, so an input of any length costs O(T · d) to keep.
    """
    from attnviz.runtime.pipeline import probabilities_only, run_trace

    cheap = probabilities_only(loaded)
    acc = None
    done = 0
    for item in items:
        if cancel is not None and cancel():
            raise ScoringCancelled("cancelled")
        is_image = loaded.config.kind == "vit"
        try:
            trace = run_trace(loaded, image=item if is_image else None, text=None if is_image else item,
                              truncate=True, precision="float32", rollout=False, **cheap)
        except InputError as exc:
            raise InputError(f"input {done + 1} ({str(item)[:40]!r}): {exc}") from None
        if acc is None:
            acc = HeadScoreAccumulator({p: (trace.layers_in(p), trace.n_heads) for p in trace.parts}, top_k=top_k)
        _add_trace(acc, trace, done)
        acc.add_inputs(done, [item])
        acc.prune()
        done += 1
        if progress is not None:
            progress(done, n_total)
    if acc is None:
        raise InputError("no inputs to score")
    return acc.result({"model": loaded.name, "kind": loaded.config.kind, "n_repeated": 0, "parts": list(acc.layers),
                       "n_layers": {p: lh[0] for p, lh in acc.layers.items()}, "n_heads": loaded.config.n_heads,
                       "note": "scored one input at a time (hooked model): no gradient share, no induction probe"})


def _add_trace(acc: HeadScoreAccumulator, trace, index: int) -> None:
    """Add one trace's per-input scores and pattern as input ``index`` (repeats found by token strings).

    Streamed over blocks of query rows of ``trace.probs`` (:mod:`attnviz.analysis.trace_head_scores`): a long
    input's maps are recomputed from q and k block by block, never whole."""
    from attnviz.analysis.trace_head_scores import stream_input_scores, token_ids

    distances, spatial = _trace_geometry(trace)
    P = acc.pattern_size
    for part in trace.parts:
        square = part != "cross"
        ids = token_ids(trace.query_tokens(part)) if square else None
        q_valid = np.ones((1, min(P, len(trace.query_tokens(part)))), dtype=bool)
        k_valid = None if square else np.ones((1, min(P, len(trace.key_tokens(part)))), dtype=bool)
        for layer in range(trace.layers_in(part)):
            scores = stream_input_scores(trace, layer, part, ids, distances, spatial)
            for name, values in scores.items():
                acc.add_scores(part, layer, name, values, index)
            corner = trace.probs(layer, part, rows=slice(0, P), cols=slice(0, P))[None]  # (1, H, ≤P, ≤P)
            acc.add_pattern(part, layer, corner, q_valid, k_valid)


def score_trace(trace, item=None) -> HeadScores:
    """The scores of one captured input (no model needed): what the data-set view shows when no data
    set can be run, so it still says something true about the input on screen."""
    acc = HeadScoreAccumulator({p: (trace.layers_in(p), trace.n_heads) for p in trace.parts})
    _add_trace(acc, trace, 0)
    acc.add_inputs(0, [item if item is not None else trace.description.input_text or "the current input"])
    return acc.result({"model": trace.description.model_name or "", "kind": trace.kind, "n_repeated": 0,
                       "parts": list(trace.parts), "n_heads": trace.n_heads,
                       "note": "the current input only"})


def _trace_geometry(trace):
    """Pixel distances and patch positions of a vision trace (prefix tokens such as CLS/DIST have none)."""
    grid = trace.grid
    if not grid:
        return None, None
    from attnviz.analysis.distance import position_distances

    T = len(trace.tokens)
    patch = trace.description.config.get("patch_size", 1) or 1
    d, off = position_distances(T, grid=grid, patch_size=patch)
    D = np.zeros((T, T))
    D[off:, off:] = d
    spatial = np.ones(T, dtype=bool)
    spatial[:off] = False
    return D, spatial
