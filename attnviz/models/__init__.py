"""Model family: configuration, attention, blocks, text and vision transformers, checkpoints."""

import sys as _sys
import types as _types

from attnviz.models.config import ModelConfig
from attnviz.models.registry import build_model

__all__ = ["ModelConfig", "build_model"]


class _CallableModels(_types.ModuleType):
    """``attnviz.models()`` lists the bundled models (the notebook API's catalog call). This package is also
    named ``attnviz.models``, and once imported Python binds that name to it, so the package itself answers
    the call (the same list as :func:`attnviz.api.catalog.models`)."""

    def __call__(self) -> list[str]:
        from attnviz.io.assets import bundled_models

        return [str(name) for name in bundled_models()]


_sys.modules[__name__].__class__ = _CallableModels
