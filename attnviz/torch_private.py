"""Every private PyTorch name attnviz uses, in one place, each with a public fallback.

Supported: torch 2.13 (the lower bound in pyproject.toml), which is also the installed version, so
``tests/test_torch_private.py`` checking each name at the installed torch covers both ends. Nothing here is patched; each name is only read.

- ``Tensor._version``: the counter torch increments on every in-place change of a tensor. It lets a cache
  (is every weight finite? the largest |w| of the output projection) be reused until a weight changes, so a
  keystroke pays a tuple of counters instead of a pass over every weight. Fallback: ``None``, and every
  caller then neither caches nor checks (it recomputes each time).
- ``torch.ops.aten._scaled_dot_product_flash_attention_for_cpu``: the CPU flash kernel behind
  ``F.scaled_dot_product_attention``, which also returns each row's log-sum-exp (what on-demand attention
  needs) without holding T×T. Fallback: ``None``; :mod:`attnviz.capture.attention_kernel` then computes the
  log-sum-exp in row chunks with ``torch.logsumexp``.
"""

from __future__ import annotations

__all__ = ["tensor_version", "cpu_flash_attention"]


def tensor_version(t) -> int | None:
    """The in-place change counter of tensor ``t``, or ``None`` when this torch has none."""
    return getattr(t, "_version", None)


def cpu_flash_attention():
    """The CPU flash-attention kernel returning (out, logsumexp), or ``None`` when this torch lacks it."""
    import torch

    op = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    return getattr(op, "default", None)
