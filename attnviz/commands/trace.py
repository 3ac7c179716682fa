"""``attnviz trace``: run one input through a model and write the Trace as .npz."""

from __future__ import annotations

import argparse
import sys

from attnviz.commands.common import (HELP_FORMATTER, add_force_arg, add_input_args, add_model_args, check_output,
                                     examples, fill_example_input, guarded_outputs, load_from_args, write_guard)
from attnviz.errors import AttnvizError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "trace", help="capture one forward pass into an .npz (what recomputes attention, not always T×T maps)",
        description="Run one input through a model and write its Trace to an .npz file that attnviz.open_trace "
                    "reads. What a layer stores depends on the input's length. Shorter than 256 tokens (and "
                    "attnviz's own models, and --grad): the model's eager attention runs and each layer keeps x, "
                    "q, k, v, the mask, the attention probabilities as the model computed them, z and the "
                    "outputs. From 256 tokens a Hugging Face model runs on its fastest attention kernel and no "
                    "(heads, T, T) array is written: each layer keeps q (after rotation), k, each row's "
                    "log-sum-exp (lse) and the rule of what the model adds to the scores (mask, window, "
                    "soft-cap, bias); its probabilities are recomputed exactly when they are read. Arrays that "
                    "are functions of others kept are recomputed when read, not stored: the attention output "
                    "and, in float32, v, q and k before rotation and the mid-block stream (where the rule "
                    "reproduces them). "
                    "The scores q·kᵀ·scale are never stored. Weights: each layer's W_Q, W_K, W_V, W_O once.",
        epilog=examples(
            "attnviz trace --model coref --text \"The animal didn't cross the street because it was too tired\" "
            "-o t.npz",
            "attnviz trace --model shapes --image photo.png --grad -o shapes.npz",
            "attnviz trace --model path/to/bert --text \"a long document\" --truncate -o bert.npz",
            "attnviz trace --model path/to/t5 --text \"the cat sat\" --target \"le chat\" -o t5.npz",
            "attnviz trace --model path/to/qwen --text \"a long document\" --layers 0,3 -o qwen.npz"),
        formatter_class=HELP_FORMATTER)
    add_model_args(p)
    add_input_args(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE.npz",
                   help="output .npz file (never one of the inputs; written atomically)")
    p.add_argument("--grad", action="store_true", help="also record gradients w.r.t. attention (L{i}.grad)")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    p.add_argument("--layers", metavar="I,J,…", type=_layer_list,
                   help="Hugging Face decoders and encoders: keep only these layers in full (x, q, k, v, z, …); "
                        "the others keep what gives their attention: the probabilities below 256 tokens, "
                        "q, k and lse from 256 (default: every layer in full)")
    add_force_arg(p)
    p.set_defaults(run=run)


def _layer_list(text: str) -> list[int]:
    try:
        layers = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        layers = None
    if not layers or any(i < 0 for i in layers):
        raise argparse.ArgumentTypeError(f"expected layer numbers like 0,3 (counted from 0), got {text!r}")
    return layers


def run(args) -> int:
    out = check_output(args.output, args)
    if out.suffix.lower() != ".npz":  # a trace named config.json or model.safetensors would pass for them
        raise AttnvizError(f"a trace is an .npz file: cannot write it to {out.name}")
    fill_example_input(args)
    loaded = load_from_args(args)
    from attnviz.runtime import run_trace

    trace = run_trace(loaded, text=args.text, image=args.image, grad=args.grad, truncate=args.truncate,
                      target_text=args.target, layers=args.layers)
    with write_guard(out), guarded_outputs(args):
        trace.save(out)
    notice = trace.description.notice
    if notice:
        print(f"attnviz: note: {notice}", file=sys.stderr)
    from attnviz.capture.compute_dtype import kept_in_words

    kept = kept_in_words(loaded.dtype)  # bfloat16: the arrays are float32 (NumPy has none)
    from attnviz.analysis.decoder_positions import length_words

    length = length_words(trace)  # an encoder–decoder: the source and the target the decoder read
    print(f"wrote {out} ({length}, {trace.n_layers} layers × {trace.n_heads} heads, "
          f"run in {loaded.dtype}{'; ' + kept if kept else ''})")
    return 0
