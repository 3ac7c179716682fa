"""The stall meter's stack sampler names what the watched thread was doing while it did not beat."""

from __future__ import annotations

import time

from attnviz.bench.stall import StackSampler, StallMeter


def _busy_until_sampled(sampler: StackSampler) -> None:
    # Python bytecode (the helper gets the interpreter lock between instructions), until it took samples
    deadline = time.monotonic() + 30
    while not sampler._samples and time.monotonic() < deadline:
        sum(range(1000))


def test_a_freeze_is_reported_with_the_function_that_caused_it():
    sampler = StackSampler(after_ms=1, every_ms=1, keep=2)
    sampler.start()
    try:
        sampler.beat()
        _busy_until_sampled(sampler)
        sampler.beat()
    finally:
        sampler.stop()
    (freeze,) = sampler.report()
    assert freeze["samples"] >= 1
    assert any("_busy_until_sampled" in stack for _, stack in freeze["stacks"])
    assert freeze["ms"] > 0


def test_only_the_longest_freezes_are_kept(qapp):
    sampler = StackSampler(after_ms=1, every_ms=1, keep=2)
    sampler.start()
    try:
        for _ in range(4):
            sampler.beat()
            _busy_until_sampled(sampler)
        sampler.beat()
    finally:
        sampler.stop()
    report = sampler.report()
    assert len(report) == 2 and report[0]["ms"] >= report[1]["ms"]


def test_the_meter_samples_only_when_asked(qapp):
    assert StallMeter().sampler is None
    meter = StallMeter(sample_stacks=True)
    with meter:
        pass
    assert meter.sampler is not None and meter.sampler._thread is None  # its helper thread has ended
