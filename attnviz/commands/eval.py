"""``attnviz eval``: re-measure a model's held-out metrics on freshly generated data."""

from __future__ import annotations

import json

from attnviz.commands.common import HELP_FORMATTER, add_model_args, examples, seed

__all__ = ["add_parser", "run", "EVAL_SEED"]

# Training records metrics with the task's default evaluation seed; `eval` draws different held-out data.
EVAL_SEED = 2024


def add_parser(sub) -> None:
    p = sub.add_parser(
        "eval", help="print a model's held-out metrics as JSON (fresh held-out data)",
        description="Re-measure the held-out metrics of a model trained on a built-in task, on held-out data "
                    "generated afresh, and print them beside the metrics recorded when it was trained.",
        epilog=examples("attnviz eval --model coref",
                        "attnviz eval --model models/my-coref --seed 7 --device cpu"),
        formatter_class=HELP_FORMATTER)
    add_model_args(p)
    p.add_argument("--seed", type=seed, default=EVAL_SEED,
                   help=f"seed of the held-out data, 0..2^32-1 (default {EVAL_SEED})")
    p.set_defaults(run=run)


def run(args) -> int:
    import torch

    from attnviz.commands.common import load_from_args
    from attnviz.errors import AttnvizError
    from attnviz.runtime import task_of

    loaded = load_from_args(args)
    task = task_of(loaded)
    if task is None:
        raise AttnvizError(f"model {loaded.name!r} was not trained on a built-in task (task: {loaded.task!r}); "
                           "there is no held-out set to evaluate it on")
    from attnviz.commands.progress import status

    with torch.no_grad(), status(f"evaluating {loaded.name} on fresh held-out data"):
        metrics = task.evaluate(loaded, seed=args.seed)
    print(json.dumps({"model": loaded.name, "task": loaded.task, "seed": args.seed, "metrics": metrics,
                      "recorded": loaded.info.get("metrics", {})}, indent=1))
    return 0
