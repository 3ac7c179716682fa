"""Which structural checks of a capture already passed for a kind of layer (Qt-free).

A capture reads each attention call's parts by rules (the projections' column layout, the rotary convention,
the output projection's input being z, R_mid = R + A, v = x W_V + b_V …) and checks each rule at three
positions before trusting it (:mod:`attnviz.hf.projections`, :mod:`attnviz.hf.layer_arrays`). A rule is a
property of the code a layer runs, not of its weights: the layers of one kind (the same module class, head
counts, head width, children and rotary width) run the same code. So a capture checks each rule on the first
layer of each kind and trusts it for that kind's other layers, unless the first reading needed a per-layer
fact (a constant folded into q): those are checked in every layer.

Why: every check is a handful of tiny tensor operations between the forward's large ones (~4 ms a layer). On
two threads the forward's second thread waits through them, so the 30 layers' checks cost ~9 % of a 512-token
capture's time on a SmolLM2-sized model (~140 ms against a 1.5 s forward); checked once per kind they cost ~5 ms.
One memo lives for one capture: the next capture checks its first layers again.
"""

from __future__ import annotations

__all__ = ["CheckMemo", "kind_of"]


def kind_of(call) -> tuple:
    """What makes two attention calls run the same code: module class, query/key heads, head width, the names
    of the children whose outputs were read, whether (and how wide) the rotary tables were, cross or self."""
    q, k = call.query, call.key
    rope = None if call.rope is None else tuple(call.rope[0].shape[-1:])
    return (type(call.module), tuple(q.shape[1:2]) if q is not None else None,
            tuple(k.shape[1:2]) if k is not None else None, int(q.shape[-1]) if q is not None else None,
            tuple(sorted(call.proj)), rope, bool(call.cross), call.columns is not None)


class CheckMemo:
    """{(kind, check name): what the check found} for one capture."""

    def __init__(self):
        self._found: dict = {}

    def get(self, kind: tuple, check: str):
        """What ``check`` found on the first layer of ``kind`` (None: not checked yet)."""
        return self._found.get((kind, check))

    def remember(self, kind: tuple, check: str, found) -> None:
        """Keep a passed check's finding for the later layers of ``kind`` (failed checks are never kept: each
        layer that fails says so itself)."""
        self._found[(kind, check)] = found
