"""What there is to ask for: the view names (:func:`views`) and the bundled model names (:func:`models`)."""

from __future__ import annotations

__all__ = ["views", "models"]


def views() -> list[str]:
    """The names ``Traced.figure(view)`` and ``attnviz export --view`` take.

    Examples
    --------
    >>> import attnviz
    >>> "head-map" in attnviz.views() and "steps" in attnviz.views()
    True
    """
    from attnviz.figures.registry import FIGURES  # the registry (a plain dict: no Qt import until a figure draws)

    return [str(name) for name in FIGURES]


def models() -> list[str]:
    """The bundled model names ``attnviz.load(name)`` takes (``attnviz.load`` also takes folders and model objects).

    Examples
    --------
    >>> import attnviz
    >>> "coref" in attnviz.models()
    True
    """
    from attnviz.io.assets import bundled_models  # no torch: attnviz.models() before any model is loaded

    return [str(name) for name in bundled_models()]
