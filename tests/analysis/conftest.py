"""Settings of the analysis tests (the tiny models they build: tests/models/tiny.py)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # Tiny models on a shared 2-core machine: intra-op threads cost more than they save (measured
    # 6× slower capture with the default thread count while other jobs run).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
