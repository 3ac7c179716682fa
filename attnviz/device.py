"""The one place that picks the compute device, and how many CPU threads the app's model runs use."""

from __future__ import annotations

__all__ = ["pick_device", "available_devices", "app_threads", "LARGE_MODEL_PARAMS"]

# From this size a forward pass is long enough (BERT-base at T = 128: ~300 ms on two cores) that every core
# pays; below it the model runs in a few ms and threads only add waiting.
LARGE_MODEL_PARAMS = 20_000_000


def available_devices() -> list[str]:
    """Devices usable here, best first; 'cpu' is always present."""
    import torch

    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    found.append("cpu")
    return found


def pick_device(requested: str | None = "auto"):
    """Return a torch.device: CUDA, then MPS, then CPU for 'auto'; validate an explicit choice."""
    import torch

    from attnviz.errors import AttnvizError

    if requested in (None, "", "auto"):
        return torch.device(available_devices()[0])
    kind = requested.split(":")[0]
    if kind not in ("cpu", "cuda", "mps"):
        raise AttnvizError(f"unknown device {requested!r}: use auto, cpu, cuda or mps")
    if kind != "cpu" and kind not in available_devices():
        raise AttnvizError(f"device {requested!r} is not available on this machine (have: {', '.join(available_devices())})")
    return torch.device(requested)


def app_threads(n_params: int, cores: int | None = None) -> int:
    """Torch threads for the app's model runs.

    A small model leaves one core to the GUI thread (more threads gain it nothing: on a busy 2-core
    machine one coref run took 138 ms with 2 threads and 5 ms with 1). A large one (``n_params`` at least
    :data:`LARGE_MODEL_PARAMS`) uses every core: the window waits for its run anyway, and BERT-base's
    forward at T = 128 took 285–324 ms on 2 threads against 377–505 ms on 1 (quiet 2-core machine).
    """
    import os

    cores = cores or os.cpu_count() or 2
    return cores if n_params >= LARGE_MODEL_PARAMS else max(1, cores - 1)
