"""``attnviz steps``: every number of self-attention's six steps for one query of one head."""

from __future__ import annotations

import dataclasses
import json
import math
import sys

from attnviz.commands.common import (HELP_FORMATTER, add_input_args, add_model_args, examples, fill_example_input, index,
                                     load_from_args)
from attnviz.text.token_display import display_token


def add_parser(sub) -> None:
    p = sub.add_parser(
        "steps", help="print the six steps of self-attention for one query (table or --json)",
        description="Every number of self-attention's six steps (project, score, scale and mask, softmax, "
                    "weight, sum) for one query of one head, recomputed from the model's weights and checked "
                    "against the model's own output.",
        epilog=examples(
            "attnviz steps --model coref --text \"The animal didn't cross the street because it was too tired\" "
            "--layer 1 --head 0 --query 8",
            "attnviz steps --model translate --text \"the big dog sees a cat\" --part cross --json > steps.json"),
        formatter_class=HELP_FORMATTER)
    add_model_args(p)
    add_input_args(p)
    p.add_argument("--layer", type=index, default=None,
                   help="layer index, from 0 (default: the walkthrough's, as in the app, the lesson and the pack)")
    p.add_argument("--head", type=index, default=None, help="head index, from 0 (default: the walkthrough's)")
    p.add_argument("--query", type=index, default=None,
                   help="query position, from 0 (default: the token the task answers at, e.g. \"it\", else the "
                        "last one)")
    p.add_argument("--part", choices=("self", "cross", "enc"), default=None,
                   help="self-attention, decoder cross-attention or the encoder of an encoder–decoder (default: "
                        "cross-attention for an encoder–decoder, as the app opens it, else self-attention)")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    p.add_argument("--json", action="store_true",
                   help="print every number as JSON (−inf as \"-inf\"); the table shows the first "
                        f"{VEC_HEAD} numbers of longer vectors")
    p.set_defaults(run=run)


VEC_HEAD = 8  # a vector longer than this prints its first numbers (576 per row on a real model); --json has all

_PART_NAMES = {"self": "self-attention", "cross": "cross-attention", "enc": "encoder self-attention"}


def _vec(a) -> str:
    """A vector's numbers, or its first :data:`VEC_HEAD` and how many there are (``--json`` prints all)."""
    import numpy as np  # not at module level: every `attnviz` start imports this module

    a = np.asarray(a)
    if a.size <= VEC_HEAD:
        return np.array2string(a, precision=4, suppress_small=True, max_line_width=110)
    head = np.array2string(a[:VEC_HEAD], precision=4, suppress_small=True, max_line_width=10**6)
    return f"{head[:-1]} … ] ({a.size} numbers)"


def _has_bias(s) -> bool:
    """True when the head's projections add a bias (a Llama-family model has none: its b_* are zeros)."""
    import numpy as np

    return any(bool(np.any(np.asarray(b) != 0)) for b in (s.b_Q, s.b_K, s.b_V))


def _num(x: float) -> str:
    return f"{x:10.4f}" if math.isfinite(x) else f"{x:>10}"


def _kv_line(s) -> str:
    shared = getattr(s, "heads_sharing_kv", None) or []
    if len(shared) > 1:
        return f"reads kv head {s.kv_head}, shared by query heads {', '.join(map(str, shared))}"
    return f"reads kv head {s.kv_head}"


def _rotary_lines(s) -> list[str]:
    if s.rope_cos_i is None:
        return []
    proj = "x_i W_Q + b_Q" if _has_bias(s) else "x_i W_Q"
    lines = [f"        before rotation: q_i = {_vec(s.q_pre_rope_i)}"
             + (f"  (after the model's per-head norm of {proj}, from the trace)" if s.qk_norm else ""),
             f"        rotary: position {s.query} turns each pair (d, d + {s.rotary_dims // 2}) of the first "
             f"{s.rotary_dims} dimensions by its angle (cos, sin from the model's table)",
             f"        cos_i = {_vec(s.rope_cos_i)}", f"        sin_i = {_vec(s.rope_sin_i)}",
             f"        after rotation:  q_i = {_vec(s.q_i)}",
             "        keys before rotation, then after (each turned by its own position j):"]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {s.key_offset + j:>3}  {tok} k = {_vec(s.k_pre_rope[j])} → {_vec(s.k[j])}")
    return lines


def format_steps(s, model_name: str) -> str:
    """The six steps as a readable text table (what ``attnviz steps`` prints without --json)."""
    # tokens as every label shows them (a BPE "Ġcat" as "cat"); --json keeps the raw tokens
    s = dataclasses.replace(s, key_tokens=[display_token(t) for t in s.key_tokens],
                            query_token=display_token(s.query_token))
    d_model, d_head = s.W_Q.shape
    width = max([8, *(len(t) for t in s.key_tokens)])
    from attnviz.analysis.model_labels import kv_input

    rotary = s.rope_cos_i is not None
    src, src_is = kv_input(s.part)  # cross-attention projects the encoder's output
    facts = [f"d_model = {d_model}, d_head = {d_head}, scale = {s.scale:.6g}"]
    dtype = s.compute_dtype
    if dtype != "float32":
        facts.append(f"run in {dtype}")
    bias = _has_bias(s)
    b_q, b_k, b_v = (" + b_Q", " + b_K", " + b_V") if bias else ("", "", "")
    if s.softcap:
        facts.append(f"soft-cap = {s.softcap:g}")
    if s.sliding_window:
        facts.append(f"sliding window = {s.sliding_window} tokens")
    if s.kv_group > 1:
        facts.append(f"grouped-query attention: {s.kv_group} query heads per key/value head")
    lines = [
        f"{model_name} · {_PART_NAMES[s.part]} · layer {s.layer} · head {s.head} ({_kv_line(s)}) · "
        f"query {s.query} {s.query_token!r}",
        ", ".join(facts),
        *([f"vectors longer than {VEC_HEAD} show their first {VEC_HEAD} numbers: --json prints every number"]
          if max(d_model, d_head) > VEC_HEAD else []),
        *([] if bias else ["this head's projections have no bias terms"]),
        *([f"keys {s.key_offset}–{s.key_offset + len(s.key_tokens) - 1} of {s.n_keys} shown (the window around the "
           f"query); the softmax and z_i run over all {s.n_keys}; --json prints every key"]
          if s.n_keys and s.n_keys > len(s.key_tokens) else []),
        "",
        f"x_i (input row {s.query}) = {_vec(s.x_i)}",
        "",
        f"step 1  q_i = x_i W_Q{b_q} = {_vec(s.q_proj_i if rotary else s.q_i)}",
        *_rotary_lines(s),
        f"        k_j = {src} W_K{b_k},  v_j = {src} W_V{b_v}" + (f"  ({src_is})" if src_is else "")
        + ("  (taken from the trace: it does not hold the encoder output they come from)"
           if s.kv_source == "trace" else "") + ("  (k_j after rotation)" if rotary else ""),
    ]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {s.key_offset + j:>3}  {tok:<{width}} k = {_vec(s.k[j])}   v = {_vec(s.v[j])}")
    cols = [("score", s.scores)]
    if rotary:
        cols += [("by distance", s.scores_by_distance)]
    cols += [("scaled", s.scaled)]
    if s.softcap:
        cols += [("capped", s.capped)]
    if s.bias is not None:
        cols += [("bias", s.bias)]
    cols += [("mask", s.mask), ("masked", s.masked), ("weight", s.weights)]
    lines += ["", "step 2  score_j = q_i · k_j" + (" (both rotated)" if rotary else "")]
    if rotary:
        lines.append(f"        by distance: unrotated q_i · (unrotated k_j turned by the table row of j − i): the "
                     f"same numbers (max |difference| {s.rotary_error:.2g}), so the score depends on the "
                     "positions only through their distance")
    step3 = "step 3  scaled_j = score_j · scale"
    if s.softcap:
        step3 += f", capped_j = {s.softcap:g}·tanh(scaled_j / {s.softcap:g})"
    step3 += ", masked_j = " + ("capped_j" if s.softcap else "scaled_j") + (" + bias_j" if s.bias is not None else "") \
        + " + mask_j" + (f" (−inf: causal or outside the {s.sliding_window}-token window)" if s.sliding_window else "")
    lines += [step3, "step 4  w = softmax(masked)", "",
              f"  {'j':>3}  {'key':<{width}}" + (f" {'j − i':>6}" if rotary else "")
              + "".join(f" {name:>11}" for name, _ in cols)]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {s.key_offset + j:>3}  {tok:<{width}}" + (f" {int(s.distance[j]):>6}" if rotary else "")
                     + "".join(f" {_num(float(vals[j])):>11}" for _, vals in cols))
    lines += ["", "step 5  weighted_j = w_j · v_j"]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {s.key_offset + j:>3}  {tok:<{width}} {_vec(s.weighted[j])}")
    lines += [
        "",
        f"step 6  z_i = Σ_j weighted_j = {_vec(s.z_i)}",
        f"        model's z             = {_vec(s.z_trace)}",
        f"        max |difference| = {s.max_error:.3g} (weights: {s.max_weight_error:.3g})",
    ]
    if dtype != "float32":  # 4e-4 reads as a bug beside float32's ~1e-7 unless the line says why
        lines.append(f"        the model ran in {dtype}: these steps are recomputed in float64 from its arrays, so "
                     f"differences up to ~1e-3 are {dtype} rounding")
    return "\n".join(lines)


def run(args) -> int:
    from attnviz.analysis.steps import compute_six_steps
    from attnviz.runtime import run_trace

    fill_example_input(args)
    loaded = load_from_args(args)
    trace = run_trace(loaded, text=args.text, image=args.image, truncate=args.truncate,
                      precision="float32", rollout=False, target_text=args.target)
    from attnviz.analysis.walkthrough_default import default_part, walkthrough_default

    # one default rule for the CLI, the app, the lesson and the pack (the part too: cross for translate)
    args.part = args.part or default_part(trace)
    layer, head, query = walkthrough_default(trace, args.part)
    if args.layer is not None or args.head is not None:
        layer = args.layer if args.layer is not None else 0
        head = args.head if args.head is not None else 0
    query = query if args.query is None else args.query
    notice = trace.description.notice
    if notice:
        print(f"attnviz: note: {notice}", file=sys.stderr)
    steps = compute_six_steps(trace, layer, head, query, part=args.part)
    if args.json:
        doc = {"model": loaded.name, "input": args.text if args.text is not None else args.image,
               **steps.to_json()}
        print(json.dumps(doc))
    else:
        from attnviz.analysis.steps_window import key_window

        # a long input's per-key rows cut to the window the app's walkthrough shows (8,190 keys are 5 MB of text)
        print(format_steps(key_window(steps), loaded.name))
    return 0
