"""attnviz: look inside small transformers, and export what you see for a lecture.

From Python (a notebook): ``attnviz.load(name, folder or model object)`` → model; ``model.trace(text)`` →
its arrays and figures; ``attnviz.from_attentions(attentions, tokens)``, ``attnviz.compare(t1, t2)``,
``attnviz.views()``, ``attnviz.models()`` (see :mod:`attnviz.api`). Those names load on first use: ``import attnviz`` stays light
(no torch, no Qt), as the app's start-up needs.
"""

__version__ = "0.1.0"
__all__ = ["__version__", "load", "open_trace", "from_attentions", "compare", "views", "models", "Model", "Traced",
           "Figure", "HtmlFigure"]

_API = ("load", "open_trace", "from_attentions", "compare", "views", "models", "Model", "Traced", "Figure",
        "HtmlFigure")


def __getattr__(name: str):
    import importlib

    if name in _API:
        return getattr(importlib.import_module("attnviz.api"), name)
    if name in ("api", "errors"):  # `attnviz.errors.AttnvizError` in a notebook, before anything imported it
        return importlib.import_module(f"attnviz.{name}")
    raise AttributeError(f"module 'attnviz' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
