"""What a long capture's budget counts as held besides the weights (attnviz.hf.held_memory): not the memory a
previous capture freed, which the allocator keeps resident and the next capture reuses first (counted, a
second 4,096-token capture in one process wrote 657 of its 1,026 MiB to disk, the first 48).

Free-but-resident memory is made with the C allocator itself: blocks below its mmap threshold, written, then
freed below the highest one, kept live (so they cannot fold into the arena's top and be handed back)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest
import torch

from attnviz.hf import allocator
from attnviz.hf.held_memory import held_besides_weights

pytestmark = pytest.mark.skipif(allocator.free_arena_bytes() is None or allocator.resident_bytes() is None,
                                reason="glibc 2.33+ on Linux (mallinfo2, /proc/self/statm)")

_LIBC = ctypes.CDLL(None)
_LIBC.malloc.restype = ctypes.c_void_p
_LIBC.malloc.argtypes = [ctypes.c_size_t]
_LIBC.free.argtypes = [ctypes.c_void_p]
FREED = 192 << 20
CHUNK = 64 << 10  # under glibc's smallest mmap threshold (128 KiB): from the arena


def _freed_resident():
    """Write FREED bytes of arena chunks and free them behind a live fence; returns the fence (free it after)."""
    blocks = [_LIBC.malloc(CHUNK) for _ in range(FREED // CHUNK)]
    for b in blocks:
        ctypes.memset(b, 1, CHUNK)
    fence = max(blocks)  # the highest block stays live: the others cannot fold into the arena's top
    for b in blocks:
        if b != fence:
            _LIBC.free(b)
    return fence


_CHILD = os.environ.get("ATTNVIZ_HELD_MEMORY_CHILD") == "1"


def _in_fresh_process(name: str) -> bool:
    """Run test ``name`` in a fresh interpreter (True: it ran there and passed). The allocator's state is the
    process's history: after the whole suite its arenas held so much free-after-trim memory that the freed blocks
    made here reused it and counted as possibly non-resident (the three tests failed in `make test` only)."""
    if _CHILD:
        return False
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{__file__}::{name}"],
                         env={**os.environ, "ATTNVIZ_HELD_MEMORY_CHILD": "1"}, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout, run.stdout[-2000:]
    return True


def _settled():
    """Trim first where the process can (what is free after a trim is the baseline ``reusable_bytes`` subtracts:
    another test's trim must not decide this one's)."""
    if allocator.TRIM is not None:
        allocator.TRIM(0)


def _model():
    import transformers as tf

    torch.manual_seed(0)
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    return tf.LlamaForCausalLM(cfg).eval()


def test_freed_memory_the_allocator_keeps_is_not_held():
    if _in_fresh_process("test_freed_memory_the_allocator_keeps_is_not_held"):
        return
    model = _model()
    _settled()
    own = sum(p.numel() * p.element_size() for p in model.parameters())
    before = held_besides_weights(model)
    fence = _freed_resident()
    try:
        rss_held = allocator.resident_bytes() - own  # the old measure: the whole resident size less the weights
        after = held_besides_weights(model)
        assert rss_held - before > FREED // 2  # control: the process did grow by the freed blocks
        assert after - before < FREED // 4  # but what it holds besides them did not
    finally:
        _LIBC.free(fence)


@pytest.mark.skipif(allocator.TRIM is None, reason="malloc_trim")
def test_after_a_trim_freed_memory_is_not_taken_as_resident():
    """A trim hands the free chunks' pages back: what is still free then may be non-resident, and reusing it
    grows the process, so it is not subtracted (the budget stays on the safe side)."""
    if _in_fresh_process("test_after_a_trim_freed_memory_is_not_taken_as_resident"):
        return
    model = _model()
    fence = _freed_resident()
    try:
        assert allocator.reusable_bytes() > FREED // 2  # control: before the trim it is resident and reusable
        allocator.TRIM(0)
        assert allocator.free_arena_bytes() > FREED // 2  # still free in the arena, its pages handed back
        assert allocator.reusable_bytes() < FREED // 4
        assert held_besides_weights(model) is not None
    finally:
        _LIBC.free(fence)


def test_a_capture_after_another_gets_the_same_budget(monkeypatch):
    """The capture asks its budget with what is held; memory freed before it does not shrink the budget."""
    if _in_fresh_process("test_a_capture_after_another_gets_the_same_budget"):
        return
    import attnviz.hf.capture as hc
    from attnviz.capture import spill

    monkeypatch.setattr(spill, "SPILL_BUDGET", None)
    asked = []
    real = hc.capture_budget
    monkeypatch.setattr(hc, "capture_budget", lambda fwd, held_bytes=None, whole_bytes=None:
                        asked.append(held_bytes) or real(fwd, held_bytes, whole_bytes))
    model, T = _model(), 300  # above ON_DEMAND_T: the on-demand path that makes a spill store
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))

    def capture():
        t = hc.capture_hf(model, {"input_ids": ids}, [str(i) for i in range(T)], attention="on_demand")
        if t.spill is not None:
            t.close()
    _settled()
    capture()
    fence = _freed_resident()
    try:
        capture()
    finally:
        _LIBC.free(fence)
    assert len(asked) == 2 and asked[0] > 0
    assert asked[1] - asked[0] < FREED // 4
