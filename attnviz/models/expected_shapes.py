"""Parameter names → shapes a model config implies, read without initialising any weights.

Used by :mod:`attnviz.models.validate` to check a weights file against its config before the model is
built for real.
"""

from __future__ import annotations

__all__ = ["expected_shapes", "CPU_SHAPE_BUILD_MAX_PARAMS"]

_SHAPES_CACHE: dict[tuple, dict[str, tuple[int, ...]]] = {}


# Below this many parameters the shapes are read from a CPU build that draws no random numbers; above it, from
# a meta-device build (no memory). Why not always meta: meta tensors run torch's Python reference kernels,
# whose first use imports torch._dynamo (1.8 s here, measured) only to read shapes, and two threads doing that
# import at once have failed with "'prims' object has no attribute 'sum'".
CPU_SHAPE_BUILD_MAX_PARAMS = 16_000_000


def _no_random_init():
    """A torch-function mode (thread-local, like ``torch.device``) that skips random initialisation.

    The tensors keep their shapes and stay uninitialised: only their shapes are read. Skipping, rather than
    drawing, also leaves torch's global random state alone, which a training run in another thread uses.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    # matched by name: a built-in such as torch.randn is a new bound object on every attribute access
    fills = {"normal_", "trunc_normal_", "uniform_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
             "xavier_normal_"}
    draws = {"randn", "rand"}

    class NoRandomInit(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if name in fills:
                return args[0] if args else kwargs["tensor"]
            if name in draws:  # same shape and options, no values drawn
                return torch.empty(*args, **kwargs)
            return func(*args, **kwargs)

    return NoRandomInit()


def expected_shapes(cfg, n_params_hint: int | None = None) -> dict[str, tuple[int, ...]]:
    """Parameter names → shapes of the model ``cfg`` describes, without initialising any weights.

    ``n_params_hint`` (e.g. counted from the weights file's header) lets a small model be built on the CPU
    instead of the meta device (see ``CPU_SHAPE_BUILD_MAX_PARAMS``); without it, or for a big model, the
    meta device (no memory). Shapes are remembered per config: switching back to a model does not pay again.
    """
    import contextlib

    import torch

    from attnviz.models.registry import build_model

    key = tuple(sorted(cfg.to_dict().items()))
    if key not in _SHAPES_CACHE:
        small = n_params_hint is not None and n_params_hint <= CPU_SHAPE_BUILD_MAX_PARAMS
        device = contextlib.nullcontext() if small else torch.device("meta")
        with device, _no_random_init():  # thread-local modes: a model built meanwhile in another thread is real
            model = build_model(cfg)
        if len(_SHAPES_CACHE) > 64:
            _SHAPES_CACHE.clear()
        _SHAPES_CACHE[key] = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    return dict(_SHAPES_CACHE[key])
