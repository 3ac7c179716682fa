"""What this process holds in memory besides a model's weights (for a long capture's in-memory budget)."""

from __future__ import annotations

from attnviz.hf.allocator import resident_bytes, reusable_bytes

__all__ = ["held_besides_weights"]


def held_besides_weights(model) -> int | None:
    """Resident bytes of this process less the model's parameters and buffers and less the free memory the
    allocator holds resident (None where the resident size cannot be read): the app holds ~0.7 GB more than a
    command-line run (Qt, its views), which a capture's budget leaves room for
    (attnviz.capture.spill.capture_budget). What the previous capture freed is not held: this capture reuses it
    before the process grows (counted, it sent 657 of 1,026 MiB to disk at 4,096 tokens in a process that had
    captured before, where the first capture sent 48)."""
    rss = resident_bytes()
    if rss is None:
        return None
    own = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
    return max(0, rss - own - reusable_bytes())
