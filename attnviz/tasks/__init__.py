"""Built-in tasks: data generators, metrics and probe inputs (Qt-free).

Each task lives in its own module and is imported only when asked for by name.
"""

from __future__ import annotations

import importlib

from attnviz.errors import AttnvizError

__all__ = ["TASKS", "get_task", "task_kind", "task_names"]

# public task name -> (module, class)
TASKS = {
    "coref": ("attnviz.tasks.coref", "CorefTask"),
    "order-sentiment": ("attnviz.tasks.order_sentiment", "OrderSentimentTask"),
    "order-sentiment-nopos": ("attnviz.tasks.order_sentiment", "OrderSentimentNoPosTask"),
    "reverse": ("attnviz.tasks.reverse", "ReverseTask"),
    "induction": ("attnviz.tasks.induction", "InductionTask"),
    "translate": ("attnviz.tasks.translate", "TranslateTask"),
    "charlm": ("attnviz.tasks.charlm", "CharLMTask"),
    "digits": ("attnviz.tasks.digits", "DigitsTask"),
    "shapes": ("attnviz.tasks.shapes", "ShapesTask"),
}


def task_names() -> list[str]:
    return list(TASKS)


def get_task(name: str, seed: int = 0):
    """Instantiate a built-in task by its public name."""
    if name not in TASKS:
        raise AttnvizError(f"unknown task {name!r}: choose one of {', '.join(TASKS)}")
    module, cls = TASKS[name]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise AttnvizError(f"task {name!r} is not available in this build ({exc.name})") from None
    return getattr(mod, cls)(seed=seed)


def task_kind(name: str) -> str | None:
    """The model kind built-in task ``name`` trains ("encoder", "vit", …); None for other names."""
    if name not in TASKS:
        return None
    module, cls = TASKS[name]
    try:
        return getattr(importlib.import_module(module), cls).kind
    except (ImportError, AttributeError):
        return None
