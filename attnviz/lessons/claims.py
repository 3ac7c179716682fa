"""Claims a lesson scene makes, measured on the spot: on the scene's own input and on fresh held-out data.

A claim is ``{"kind": KIND, ...parameters}`` in a scene. :func:`evaluate_claim` runs the model, computes
the number the caption states and returns a :class:`ClaimResult` with a one-line verdict. Nothing here
is stored or hard-coded: every number is recomputed from the model each time (numpy recomputations of
the trace's arrays, what-if re-runs, held-out data the task generates with a seed never used in
training or in the stored metrics).

Kinds: ``attends-to``, ``six-steps``, ``matrix-form``, ``concat-heads``, ``causal-mask``,
``scale-saturation``, ``permutation``, ``word-order``, ``sinusoidal``, ``filters-pca``,
``rollout-pointing``, ``cross-alignment``. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.errors import InputError

__all__ = ["ClaimResult", "Workbench", "evaluate_claim", "CLAIMS", "HELD_OUT_SEED", "fresh_texts",
           "scene_selection", "format_caption"]

HELD_OUT_SEED = 20261123  # fresh held-out data: neither the training seed nor the stored metrics' seeds


@dataclass
class ClaimResult:
    """One claim, measured. ``here``: on the scene's own input; ``held_out``: on fresh held-out data
    (None when the claim does not depend on data); ``values``: every number, for the caption."""

    kind: str
    here: float
    held_out: float | None
    ok: bool
    line: str
    values: dict = field(default_factory=dict)


class Workbench:
    """Loads each model once and traces scenes (with their what-if switches) for claims and exports."""

    def __init__(self):
        self._models: dict[str, object] = {}

    def model(self, name: str):
        from attnviz.runtime import load_model

        if name not in self._models:
            self._models[name] = load_model(name, device="cpu")
        return self._models[name]

    def trace(self, scene, grad: bool = False):
        """The scene's trace: its input through its model with its what-if switches."""
        from attnviz.runtime import run_trace
        from attnviz.whatif import applied

        loaded = self.model(scene.model)
        switches = scene.whatif_switches()
        image = scene.image_source()
        if switches.is_default:
            return run_trace(loaded, text=scene.text, image=image, grad=grad)
        with applied(loaded.model, switches):
            trace = run_trace(loaded, text=scene.text, image=image, grad=grad, precision="float32")
        trace.meta["whatif"] = switches.describe()
        return trace


def scene_selection(scene, trace):
    """The scene's SelectionState; unset layer/head/query fall back to the model's named ``focus``
    (coref: the head chosen on validation data, at "it"), then to the task's query, then 0."""
    from attnviz.selection import SelectionState

    focus = trace.meta.get("focus") or {}
    layer = scene.layer if scene.layer is not None else int(focus.get("layer", 0))
    head = scene.head if scene.head is not None else int(focus.get("head", 0))
    query = scene.query
    if query is None:
        query = focus.get("query", trace.meta.get("query_index"))
    state = SelectionState(layer=layer, head=head, query=None if query is None else int(query), part=scene.part)
    trace.check_selection(state.part, state.layer, state.head, state.query)
    return state


def format_caption(template: str, result: ClaimResult | None) -> str:
    """Fill ``{name}`` / ``{name:.2f}`` fields of a caption with the claim's measured values."""
    if not template or result is None:
        return template
    try:
        return template.format(**result.values)
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError(f"caption {template!r} names a value the claim does not measure ({exc})") from None


# -- held-out inputs -------------------------------------------------------------------------------
def fresh_texts(loaded, n: int, seed: int = HELD_OUT_SEED) -> list[str]:
    """``n`` held-out inputs of the model's task as text (the task's "test" split, a fresh seed)."""
    from attnviz.runtime import task_of

    task = task_of(loaded)
    rng = np.random.default_rng(seed)
    if task is None:
        raise InputError(f"{loaded.name} names no built-in task: no held-out data to check the claim on")
    if task.name in ("coref", "order-sentiment", "order-sentiment-nopos"):
        return [t for t, _ in task.sentences("test", n, rng)]
    if task.name == "translate":
        return [" ".join(src) for src, _, _ in task.sample_sentences("test", n, rng)]
    if task.name == "induction":
        return [_induction_text(task, rng) for _ in range(n)]
    raise InputError(f"no held-out text generator for task {task.name!r}")


def _induction_text(task, rng) -> str:
    from attnviz.tasks.induction import ALPHABET

    k = int(rng.integers(3, 7))
    prefix = "".join(rng.choice(list(ALPHABET), size=int(rng.integers(0, 4))))
    word = "".join(rng.choice(list(ALPHABET), size=k, replace=False))
    return prefix + word + word


def _trace_text(loaded, text):
    from attnviz.runtime import run_trace

    return run_trace(loaded, text=text, rollout=False)


# -- numpy recomputations --------------------------------------------------------------------------
def _softmax(x: np.ndarray) -> np.ndarray:
    m = np.max(np.where(np.isfinite(x), x, -np.inf), axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(-1, keepdims=True)


def _recompute(trace, layer: int) -> dict:
    """q, k, v, P, Z and out of one self-attention layer from x and the weights alone (float64)."""
    f = lambda key: np.asarray(trace[f"L{layer}.{key}"], dtype=np.float64)  # noqa: E731
    x = f("x")
    H, dh = trace.n_heads, trace.meta["d_head"]
    n_kv = trace.meta.get("n_kv_heads") or H
    q = (x @ f("W_q") + f("b_q")).reshape(len(x), H, dh).transpose(1, 0, 2)
    k = (x @ f("W_k") + f("b_k")).reshape(len(x), n_kv, dh).transpose(1, 0, 2)
    v = (x @ f("W_v") + f("b_v")).reshape(len(x), n_kv, dh).transpose(1, 0, 2)
    group = H // n_kv
    k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
    logits = q @ k.transpose(0, 2, 1) * float(trace.meta["scale"])
    P = _softmax(logits + f("mask")[None])
    z = P @ v
    gate = np.asarray(trace[f"L{layer}.head_gate"], dtype=np.float64) if f"L{layer}.head_gate" in trace else np.ones(H)
    concat = (z * gate[:, None, None]).transpose(1, 0, 2).reshape(len(x), H * dh)
    return {"q": q, "k": k, "v": v, "P": P, "z": z, "out": concat @ f("W_o") + f("b_o")}


def _max_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def _each_fresh(loaded, n, seed, fn) -> list:
    return [fn(_trace_text(loaded, text)) for text in fresh_texts(loaded, n, seed)]


# -- the claims ------------------------------------------------------------------------------------
def _attends_to(scene, bench, trace, state, p, seed, n):
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


def _six_steps(scene, bench, trace, state, p, seed, n):
    def err(tr, layer=state.layer, head=state.head, q=state.query):
        r = _recompute(tr, layer)
        q = q if q is not None else len(tr.tokens) - 1
        return max(_max_err(r["P"][head, q], tr[f"L{layer}.probs"][head, q]),
                   _max_err(r["z"][head, q], tr[f"L{layer}.z"][head, q]))

    loaded = bench.model(scene.model)
    here = err(trace)
    held = max(_each_fresh(loaded, n, seed, lambda tr: err(tr, q=min(state.query or 0, len(tr.tokens) - 1))))
    r = _recompute(trace, state.layer)
    row = r["P"][state.head, state.query]
    top = int(np.argmax(row))
    ok = here < 1e-4 and held < 1e-4
    line = (f"x·W_Q … softmax … Σ p·v recomputed in numpy from x and the weights: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs; largest weight {row[top]:.2f} on '{trace.tokens[top]}'")
    return ClaimResult("six-steps", here, held, ok, line, {"here": here, "held": held, "n": n, "top_weight": float(row[top]),
                                                           "top_token": trace.tokens[top], "row_sum": float(row.sum())})


def _matrix_form(scene, bench, trace, state, p, seed, n):
    def err(tr):
        r = _recompute(tr, state.layer)
        return _max_err(r["P"], tr[f"L{state.layer}.probs"])

    loaded = bench.model(scene.model)
    here, held = err(trace), max(_each_fresh(loaded, n, seed, err))
    ok = here < 1e-4 and held < 1e-4
    T = len(trace.tokens)
    line = (f"P = softmax(QKᵀ/√d_k + M) for all {trace.n_heads} heads × {T}×{T} at once: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs")
    return ClaimResult("matrix-form", here, held, ok, line, {"here": here, "held": held, "n": n, "T": T})


def _concat_heads(scene, bench, trace, state, p, seed, n):
    def err(tr):
        r = _recompute(tr, state.layer)
        return _max_err(r["out"], tr[f"L{state.layer}.out"])

    loaded = bench.model(scene.model)
    here, held = err(trace), max(_each_fresh(loaded, n, seed, err))
    ok = here < 1e-3 and held < 1e-3
    line = (f"concat(Z₁…Z_{trace.n_heads})·W_O + b_O equals the layer's output: max |Δ| {here:.1e} here, "
            f"{held:.1e} over {n} held-out inputs")
    return ClaimResult("concat-heads", here, held, ok, line, {"here": here, "held": held, "n": n, "H": trace.n_heads})


def _causal_mask(scene, bench, trace, state, p, seed, n):
    def measure(tr):
        m = np.asarray(tr[f"L{state.layer}.mask"], dtype=np.float64)
        T = m.shape[0]
        upper = np.triu(np.ones((T, T), bool), 1)
        right = bool(np.all(np.isneginf(m[upper])) and np.all(m[~upper] == 0))
        leak = float(np.max(np.asarray(tr[f"L{state.layer}.probs"])[:, upper])) if upper.any() else 0.0
        return right, leak, int(upper.sum())

    loaded = bench.model(scene.model)
    right, here, cells = measure(trace)
    fresh = _each_fresh(loaded, n, seed, measure)
    held = max(leak for _, leak, _ in fresh)
    ok = right and all(r for r, _, _ in fresh) and here == 0.0 and held == 0.0
    T = len(trace.tokens)
    line = (f"M is −∞ on all {cells} cells above the diagonal of the {T}×{T} matrix, 0 elsewhere; largest weight on a "
            f"future token {here:g} here and {held:g} over {n} held-out inputs")
    return ClaimResult("causal-mask", here, held, ok, line, {"here": here, "held": held, "n": n, "cells": cells, "T": T})


def _row_peak(tr) -> float:
    """Mean over layers, heads and rows of the largest attention weight in a row."""
    return float(np.mean([np.asarray(p, np.float64).max(-1).mean() for p in tr.all_probs()]))


def _scale_saturation(scene, bench, trace, state, p, seed, n):
    from attnviz.whatif import WhatIf, applied

    loaded = bench.model(scene.model)

    def pair(text):
        trained = _row_peak(_trace_text(loaded, text))
        with applied(loaded.model, WhatIf(scale="none")):
            raw = _row_peak(_trace_text(loaded, text))
        return trained, raw

    text = scene.text
    trained, raw = pair(text)
    fresh = [pair(t) for t in fresh_texts(loaded, n, seed)]
    f_trained, f_raw = float(np.mean([a for a, _ in fresh])), float(np.mean([b for _, b in fresh]))
    d_k = trace.meta["d_head"]
    ok = raw > trained and f_raw > f_trained
    line = (f"without 1/√d_k (d_k = {d_k}) the mean largest weight per row rises from {trained:.2f} to {raw:.2f} here, "
            f"{f_trained:.2f} → {f_raw:.2f} over {n} held-out inputs: the softmax saturates")
    return ClaimResult("scale-saturation", raw - trained, f_raw - f_trained, ok, line,
                       {"trained": trained, "raw": raw, "held_trained": f_trained, "held_raw": f_raw, "n": n,
                        "d_k": d_k, "here": raw - trained, "held": f_raw - f_trained})


def _permutation(scene, bench, trace, state, p, seed, n):
    from attnviz.whatif import WhatIf, permute_tokens

    loaded = bench.model(scene.model)
    res = permute_tokens(loaded, scene.text, whatif=WhatIf(), seed=int(p.get("perm_seed", 0)))
    P = res.probs_orig[state.layer][state.head]
    contrast = float(np.max(np.abs(P - 1.0 / P.shape[-1])))
    fresh = [permute_tokens(loaded, t, whatif=WhatIf(), seed=i).max_error
             for i, t in enumerate(fresh_texts(loaded, n, seed))]
    held = max(fresh)
    with_pos = p.get("with_positions")
    broken = None
    if with_pos:
        broken = permute_tokens(bench.model(with_pos), scene.text, whatif=WhatIf(), perm=res.perm).max_error
    ok = res.max_error < 1e-5 and held < 1e-5 and contrast >= float(p.get("min_contrast", 0.1)) and \
        (broken is None or broken > 1e-3)
    line = (f"max |P(RX) − R·P·Rᵀ| {res.max_error:.1e} here, {held:.1e} over {n} held-out sentences; the attention "
            f"is not flat (max |P − 1/T| {contrast:.2f})")
    if broken is not None:
        line += f"; with positions ({with_pos}) the same permutation gives {broken:.2f}"
    return ClaimResult("permutation", res.max_error, held, ok, line,
                       {"here": res.max_error, "held": held, "n": n, "contrast": contrast,
                        "with_positions": broken if broken is not None else float("nan")})


def _word_order(scene, bench, trace, state, p, seed, n):
    from attnviz.runtime import task_of
    from attnviz.tasks.order_sentiment import NEGATIVE, POSITIVE, swap

    names = {"positions": p.get("with_positions", "order-sentiment"),
             "none": p.get("without_positions", "order-sentiment-nopos")}
    models = {k: bench.model(v) for k, v in names.items()}
    words = scene.text.lower().replace(",", " ,").split()
    adj = [w for w in words if w in POSITIVE or w in NEGATIVE]
    if len(adj) != 2:
        raise InputError("the word-order claim needs a sentence with one positive and one negative adjective")
    swapped = swap(" ".join(words), adj[0], adj[1])
    answers = {}
    for k, loaded in models.items():
        answers[k] = [int(np.argmax(_trace_text(loaded, t)["prediction"])) for t in (" ".join(words), swapped)]
    held = {k: task_of(m).evaluate(m, seed=seed, n=n)["swapped_pair_accuracy"] for k, m in models.items()}
    ok = answers["positions"][0] != answers["positions"][1] and answers["none"][0] == answers["none"][1] and \
        held["positions"] >= 0.95 and held["none"] <= 0.6
    labels = models["positions"].info["labels"]
    # evaluate(n=...) scores n sentences, i.e. n // 2 swapped pairs
    line = (f"swapped pairs right: {held['positions']:.1%} with positions, {held['none']:.1%} without ({n // 2} "
            f"held-out pairs, {n} sentences); here with positions {labels[answers['positions'][0]]} / {labels[answers['positions'][1]]}, "
            f"without {labels[answers['none'][0]]} / {labels[answers['none'][1]]}")
    return ClaimResult("word-order", held["positions"] - held["none"], held["none"], ok, line,
                       {"with": held["positions"], "without": held["none"], "n": n // 2, "here": float(ok),
                        "held": held["none"]})


def _sinusoidal(scene, bench, trace, state, p, seed, n):
    from attnviz.models.blocks import PositionalEncoding

    loaded = bench.model(scene.model)
    enc = next((m for m in loaded.model.modules() if isinstance(m, PositionalEncoding)), None)
    if enc is None or enc.kind != "sinusoidal":
        raise InputError(f"{scene.model} has no sinusoidal positional encoding")
    table = enc.table.detach().cpu().numpy().astype(np.float64)  # (max_len, D)
    norm = float(np.mean(np.sum(table**2, 1)))
    spread = []
    for k in range(1, len(table) // 2):
        dots = np.sum(table[:-k] * table[k:], 1)  # PE(p)·PE(p+k) for every p
        spread.append(float(np.ptp(dots)) / norm)
    here = max(spread[: int(p.get("offsets", 8))])
    held = max(spread)
    ok = held < 1e-4
    line = (f"PE(p)·PE(p+k) is the same for every p (a shift is a rotation): relative spread {here:.1e} for k ≤ "
            f"{int(p.get('offsets', 8))}, {held:.1e} for every offset up to {len(table) // 2 - 1} of {len(table)} positions")
    return ClaimResult("sinusoidal", here, None, ok, line, {"here": here, "held": held, "positions": len(table)})


def low_frequency_share(component: np.ndarray) -> float:
    """Share of a (P, P, C) component's energy in spatial frequencies u + v < P/2 (2-D DCT-II per channel)."""
    P = component.shape[0]
    i = np.arange(P)
    basis = np.cos(np.pi * (2 * i[None, :] + 1) * i[:, None] / (2 * P))  # (freq, pixel)
    coef = np.einsum("ux,xyc,vy->uvc", basis, component, basis)
    energy = np.sum(coef**2, axis=-1)
    low = np.add.outer(i, i) < P / 2
    return float(energy[low].sum() / energy.sum())


def _filters_pca(scene, bench, trace, state, p, seed, n):
    from attnviz.analysis.pca import compute_filter_pca
    from attnviz.runtime import task_of

    loaded = bench.model(scene.model)
    comps, ratio = compute_filter_pca(np.asarray(trace["emb.patch_weight"]), k=int(p.get("k", 28)))
    top = int(p.get("top", 4))
    smooth = float(np.mean([low_frequency_share(c) for c in comps[:top]]))
    P = comps.shape[1]
    chance_smooth = float(np.mean(np.add.outer(np.arange(P), np.arange(P)) < P / 2))
    task = task_of(loaded)
    metrics = task.evaluate(loaded, seed=seed)
    ok = smooth >= float(p.get("min_smooth", 0.7)) and metrics["accuracy"] >= 0.97
    line = (f"top {top} of {len(ratio)} components: {smooth:.0%} of their energy in low spatial frequencies "
            f"(white noise: {chance_smooth:.0%}); they explain {ratio[:top].sum():.1%} of the filters' variance; "
            f"{P}×{P} patches; accuracy {metrics['accuracy']:.1%} on {metrics['n_test']} fresh held-out scenes "
            f"(chance {1 / len(task.labels):.0%})")
    return ClaimResult("filters-pca", smooth, metrics["accuracy"], ok, line,
                       {"here": smooth, "held": metrics["accuracy"], "noise": chance_smooth, "patch": P,
                        "top_share": float(ratio[:top].sum()), "n": metrics["n_test"]})


def _rollout_pointing(scene, bench, trace, state, p, seed, n):
    from attnviz.runtime import task_of
    from attnviz.vision.pointing import patch_hits

    loaded = bench.model(scene.model)
    task = task_of(loaded)
    grid = trace.grid
    roll = np.asarray(trace["rollout"], dtype=np.float64)[0, 1:].reshape(grid)  # [CLS] row over the patches
    peak = np.unravel_index(int(np.argmax(roll)), grid)
    mask = task.probe_mask(int(p["label"])) if "label" in p else None
    here = float(patch_hits(np.array([peak[0] * grid[1] + peak[1]]), mask[None], loaded.config.patch_size)[0]) \
        if mask is not None else float("nan")
    metrics = task.evaluate(loaded, seed=seed)
    ok = (here == 1.0 or mask is None) and metrics["pointing_game"] >= 0.9 and \
        metrics["pointing_game"] > metrics["pointing_chance"]
    line = (f"rollout peaks {'on' if here == 1.0 else 'off'} the shape here (patch {peak[0]},{peak[1]}); pointing game "
            f"{metrics['pointing_game']:.1%} on {metrics['n_test']} fresh held-out scenes, chance "
            f"{metrics['pointing_chance']:.1%}")
    return ClaimResult("rollout-pointing", here, metrics["pointing_game"], ok, line,
                       {"here": here, "held": metrics["pointing_game"], "chance": metrics["pointing_chance"],
                        "n": metrics["n_test"]})


def _cross_alignment(scene, bench, trace, state, p, seed, n):
    from attnviz.runtime import task_of

    loaded = bench.model(scene.model)
    pairs = trace.meta.get("alignment")
    if not pairs:
        raise InputError("the scene's sentence has no reference alignment (not a sentence of the grammar)")
    P = np.asarray(trace[f"L{state.layer}.cross.probs"], dtype=np.float64).mean(0)  # heads averaged
    here = float(np.mean([int(np.argmax(P[r]) == s) for r, s in pairs]))
    metrics = task_of(loaded).evaluate(loaded, seed=seed)
    held = float(metrics["alignment"])
    ok = here >= 0.8 and held >= 0.9
    line = (f"cross-attention (layer {state.layer}, heads averaged) peaks on the aligned source word for "
            f"{here:.0%} of {len(pairs)} words here, {held:.1%} over {metrics['n_eval']} fresh held-out sentences")
    return ClaimResult("cross-alignment", here, held, ok, line, {"here": here, "held": held, "n": metrics["n_eval"],
                                                                 "words": len(pairs)})


CLAIMS = {
    "attends-to": _attends_to, "six-steps": _six_steps, "matrix-form": _matrix_form, "concat-heads": _concat_heads,
    "causal-mask": _causal_mask, "scale-saturation": _scale_saturation, "permutation": _permutation,
    "word-order": _word_order, "sinusoidal": _sinusoidal, "filters-pca": _filters_pca,
    "rollout-pointing": _rollout_pointing, "cross-alignment": _cross_alignment,
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
