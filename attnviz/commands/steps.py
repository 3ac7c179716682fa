"""``attnviz steps``: every number of self-attention's six steps for one query of one head."""

from __future__ import annotations

import json
import math
import sys

from attnviz.commands.common import (HELP_FORMATTER, add_input_args, add_model_args, examples, fill_example_input, index,
                                     load_from_args)


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
    p.add_argument("--layer", type=index, default=0, help="layer index, from 0 (default 0)")
    p.add_argument("--head", type=index, default=0, help="head index, from 0 (default 0)")
    p.add_argument("--query", type=index, default=None,
                   help="query position, from 0 (default: the last one, whose output a decoder predicts from)")
    p.add_argument("--part", choices=("self", "cross", "enc"), default="self",
                   help="self-attention (default), decoder cross-attention or the encoder of an encoder–decoder")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    p.add_argument("--json", action="store_true", help="print every number as JSON (−inf as \"-inf\")")
    p.set_defaults(run=run)


_PART_NAMES = {"self": "self-attention", "cross": "cross-attention", "enc": "encoder self-attention"}


def _vec(a) -> str:
    import numpy as np  # not at module level: every `attnviz` start imports this module

    return np.array2string(np.asarray(a), precision=4, suppress_small=True, max_line_width=110, threshold=10**6)


def _num(x: float) -> str:
    return f"{x:10.4f}" if math.isfinite(x) else f"{x:>10}"


def format_steps(s, model_name: str) -> str:
    """The six steps as a readable text table (what ``attnviz steps`` prints without --json)."""
    d_model, d_head = s.W_Q.shape
    width = max([8, *(len(t) for t in s.key_tokens)])
    lines = [
        f"{model_name} · {_PART_NAMES[s.part]} · layer {s.layer} · head {s.head} (reads kv head {s.kv_head}) · "
        f"query {s.query} {s.query_token!r}",
        f"d_model = {d_model}, d_head = {d_head}, scale = {s.scale:.6g}",
        "",
        f"x_i (input row {s.query}) = {_vec(s.x_i)}",
        "",
        f"step 1  q_i = x_i W_Q + b_Q = {_vec(s.q_i)}",
        "        k_j = x_j W_K + b_K,  v_j = x_j W_V + b_V"
        + ("  (taken from the trace: it does not hold the encoder output they come from)"
           if s.kv_source == "trace" else ""),
    ]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {j:>3}  {tok:<{width}} k = {_vec(s.k[j])}   v = {_vec(s.v[j])}")
    lines += [
        "",
        "step 2  score_j = q_i · k_j",
        "step 3  scaled_j = score_j · scale, masked_j = scaled_j + mask_j",
        "step 4  w = softmax(masked)",
        "",
        f"  {'j':>3}  {'key':<{width}} {'score':>10} {'scaled':>10} {'mask':>10} {'masked':>10} {'weight':>10}",
    ]
    for j, tok in enumerate(s.key_tokens):
        lines.append(
            f"  {j:>3}  {tok:<{width}} {_num(s.scores[j])} {_num(s.scaled[j])} {_num(s.mask[j])} "
            f"{_num(s.masked[j])} {_num(s.weights[j])}"
        )
    lines += ["", "step 5  weighted_j = w_j · v_j"]
    for j, tok in enumerate(s.key_tokens):
        lines.append(f"  {j:>3}  {tok:<{width}} {_vec(s.weighted[j])}")
    lines += [
        "",
        f"step 6  z_i = Σ_j weighted_j = {_vec(s.z_i)}",
        f"        model's z             = {_vec(s.z_trace)}",
        f"        max |difference| = {s.max_error:.3g} (weights: {s.max_weight_error:.3g})",
    ]
    return "\n".join(lines)


def run(args) -> int:
    from attnviz.analysis.steps import compute_six_steps
    from attnviz.runtime import run_trace

    fill_example_input(args)
    loaded = load_from_args(args)
    trace = run_trace(loaded, text=args.text, image=args.image, truncate=args.truncate,
                      precision="float32", rollout=False, target_text=args.target)
    query = len(trace.query_tokens(args.part)) - 1 if args.query is None else args.query
    notice = trace.meta.get("notice")
    if notice:
        print(f"attnviz: note: {notice}", file=sys.stderr)
    steps = compute_six_steps(trace, args.layer, args.head, query, part=args.part)
    if args.json:
        doc = {"model": loaded.name, "input": args.text if args.text is not None else args.image,
               **steps.to_json()}
        print(json.dumps(doc))
    else:
        print(format_steps(steps, loaded.name))
    return 0
