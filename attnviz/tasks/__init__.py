"""Built-in tasks: data generators, metrics and probe inputs (Qt-free).

Each task lives in its own module and is imported only when asked for by name. The imports are
spelled out as import statements in :func:`_import_task_module`, not built from strings, so that a
bundler (PyInstaller follows import statements) collects every task into a packaged build.
"""

from __future__ import annotations

import importlib

from attnviz.errors import AttnvizError

__all__ = ["TASKS", "get_task", "task_kind", "task_names"]

# public task name -> (module, class)
TASKS = {
    "coref": ("attnviz.tasks.coref", "CorefTask"),
    "coref-emergent": ("attnviz.tasks.coref_emergent", "CorefEmergentTask"),
    "order-sentiment": ("attnviz.tasks.order_sentiment", "OrderSentimentTask"),
    "order-sentiment-nopos": ("attnviz.tasks.order_sentiment", "OrderSentimentNoPosTask"),
    "reverse": ("attnviz.tasks.reverse", "ReverseTask"),
    "induction": ("attnviz.tasks.induction", "InductionTask"),
    "translate": ("attnviz.tasks.translate", "TranslateTask"),
    "charlm": ("attnviz.tasks.charlm", "CharLMTask"),
    "digits": ("attnviz.tasks.digits", "DigitsTask"),
    "shapes": ("attnviz.tasks.shapes", "ShapesTask"),
    "masked-lm": ("attnviz.tasks.masked_lm", "MaskedLMTask"),
}


def task_names() -> list[str]:
    return list(TASKS)


def get_task(name: str, seed: int = 0):
    """Instantiate a built-in task by its public name."""
    if name not in TASKS:
        raise AttnvizError(f"unknown task {name!r}: choose one of {', '.join(TASKS)}")
    module, cls = TASKS[name]
    try:
        mod = _import_task_module(module)
    except ModuleNotFoundError as exc:
        raise AttnvizError(f"task {name!r} is not available in this build ({exc.name})") from None
    return getattr(mod, cls)(seed=seed)


def _import_task_module(module: str):
    """Import a task module; every built-in one by an explicit statement (see the module docstring)."""
    if module == "attnviz.tasks.coref":
        from attnviz.tasks import coref as mod
    elif module == "attnviz.tasks.coref_emergent":
        from attnviz.tasks import coref_emergent as mod
    elif module == "attnviz.tasks.order_sentiment":
        from attnviz.tasks import order_sentiment as mod
    elif module == "attnviz.tasks.reverse":
        from attnviz.tasks import reverse as mod
    elif module == "attnviz.tasks.induction":
        from attnviz.tasks import induction as mod
    elif module == "attnviz.tasks.translate":
        from attnviz.tasks import translate as mod
    elif module == "attnviz.tasks.charlm":
        from attnviz.tasks import charlm as mod
    elif module == "attnviz.tasks.digits":
        from attnviz.tasks import digits as mod
    elif module == "attnviz.tasks.shapes":
        from attnviz.tasks import shapes as mod
    elif module == "attnviz.tasks.masked_lm":
        from attnviz.tasks import masked_lm as mod
    else:  # a task registered at run time (tests, plug-ins): by name
        mod = importlib.import_module(module)
    return mod


def task_kind(name: str) -> str | None:
    """The model kind built-in task ``name`` trains ("encoder", "vit", …); None for other names."""
    if name not in TASKS:
        return None
    module, cls = TASKS[name]
    try:
        return getattr(_import_task_module(module), cls).kind
    except (ImportError, AttributeError):
        return None
