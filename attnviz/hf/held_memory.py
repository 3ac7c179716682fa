"""What this process holds in memory besides a model's weights (for a long capture's in-memory budget)."""

from __future__ import annotations

from attnviz.hf.layer_convert import resident_bytes

__all__ = ["held_besides_weights"]


def held_besides_weights(model) -> int | None:
    """Resident bytes of this process less the model's parameters and buffers (None where the resident size
    cannot be read): the app holds ~0.7 GB more than a command-line run (Qt, its views), which a capture's
    budget leaves room for (attnviz.capture.spill.capture_budget)."""
    rss = resident_bytes()
    if rss is None:
        return None
    own = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
    return max(0, rss - own)
