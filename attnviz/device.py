"""The one place that picks the compute device."""

from __future__ import annotations

__all__ = ["pick_device", "available_devices"]


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
