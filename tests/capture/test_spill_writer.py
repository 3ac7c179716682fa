"""Spilled arrays written on a background thread (attnviz.capture.spill_writer, SpillStore.keep(into=...)).

Checked: after flush every spilled entry of the trace's dict is a read-only map equal to the array handed over
(an array named twice is written once, both names mapped); the arrays waiting for the writer never exceed the
bound (control: with a large bound they do, on the same jobs); a failed write reaches the caller as
AttnvizError at flush and at the next put, and a capture whose writes fail raises AttnvizError (control: the same
capture with writes working returns a trace, tests/capture/test_spill.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from attnviz.capture import spill
from attnviz.capture.spill import SpillStore
from attnviz.capture.spill_writer import SpillWriter
from attnviz.errors import AttnvizError


def test_entries_become_maps_equal_to_the_arrays():
    store = SpillStore(budget=0, min_bytes=1)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 40, 8)).astype(np.float32)
    strided = rng.standard_normal((40, 3, 8)).astype(np.float32).transpose(1, 0, 2)
    into = {}
    store.keep({"L0.q": a, "L0.bias": a, "L0.z": strided}, into=into)
    store.flush()
    assert set(into) == {"L0.q", "L0.bias", "L0.z"}
    for key, want in (("L0.q", a), ("L0.bias", a), ("L0.z", strided)):
        assert isinstance(into[key], np.memmap) and not into[key].flags.writeable, key
        np.testing.assert_array_equal(into[key], want)
    assert sorted(store.files) == ["L0.q", "L0.z"]  # one file for the array named twice
    assert store.finite == {"L0.q", "L0.bias", "L0.z"}
    nan = np.full((4, 4), np.nan, np.float32)
    store.keep({"L1.x": nan}, into=into)
    store.flush()
    assert "L1.x" not in store.finite  # control: the NaN check runs on the writer thread too
    store.close()


def test_waiting_bytes_stay_within_the_bound():
    def run(ahead: int) -> int:
        writer, go, done = SpillWriter("folder", ahead=ahead), threading.Event(), []

        def job():
            go.wait()
            done.append(1)

        def produce():
            for _ in range(10):
                writer.put(10, job)

        producer = threading.Thread(target=produce)
        producer.start()
        if ahead >= 100:
            producer.join()  # every job queued before any runs
        go.set()
        producer.join()
        writer.flush()
        assert len(done) == 10
        return writer.most_pending

    assert run(25) <= 25
    assert run(1000) == 100  # control: the same jobs without the bound all wait at once


def test_a_failed_write_is_raised_to_the_caller(monkeypatch):
    def broken(fh, arr):
        raise OSError("No space left on device")

    monkeypatch.setattr(spill, "_write_npy", broken)
    store = SpillStore(budget=0, min_bytes=1)
    into = {}
    store.keep({"L0.q": np.ones((8, 8), np.float32)}, into=into)
    with pytest.raises(AttnvizError, match="No space left on device"):
        store.flush()
    with pytest.raises(AttnvizError):
        store.keep({"L1.q": np.ones((8, 8), np.float32)}, into=into)
    store.close()


def test_a_capture_whose_writes_fail_raises_attnviz_error(monkeypatch):
    import transformers as tf

    from attnviz.hf.capture import capture_hf

    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=512)).eval()
    T = 300  # on the SDPA kernel: the layers are converted and spilled as the forward runs
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    monkeypatch.setattr(spill, "SPILL_BUDGET", 0)
    monkeypatch.setattr(spill, "SPILL_MIN_BYTES", 1)

    def broken(fh, arr):
        raise OSError("No space left on device")

    monkeypatch.setattr(spill, "_write_npy", broken)
    with pytest.raises(AttnvizError, match="could not write the trace's arrays"):
        capture_hf(model, {"input_ids": ids}, [str(i) for i in range(T)], attention="on_demand")
