"""``attnviz trace``: run one input through a model and write the Trace as .npz."""

from __future__ import annotations

import sys

from attnviz.commands.common import add_input_args, add_model_args, check_writable, load_from_args


def add_parser(sub) -> None:
    p = sub.add_parser("trace", help="capture every intermediate of one forward pass into an .npz")
    add_model_args(p)
    add_input_args(p)
    p.add_argument("-o", "--output", required=True, help="output .npz file")
    p.add_argument("--grad", action="store_true", help="also record gradients w.r.t. attention (L{i}.grad)")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    p.set_defaults(run=run)


def run(args) -> int:
    out = check_writable(args.output)
    loaded = load_from_args(args)
    from attnviz.runtime import run_trace

    trace = run_trace(loaded, text=args.text, image=args.image, grad=args.grad, truncate=args.truncate)
    trace.save(out)
    notice = trace.meta.get("notice")
    if notice:
        print(f"attnviz: note: {notice}", file=sys.stderr)
    print(f"wrote {out} ({len(trace.tokens)} tokens, {trace.n_layers} layers × {trace.n_heads} heads)")
    return 0
