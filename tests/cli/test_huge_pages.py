"""The attnviz command asks PyTorch's CPU allocator for transparent huge pages (a capture's kept tensors were
first-touched 4 KiB at a time: 854k page faults at 4,096 tokens on a SmolLM2-shaped model, 75k with them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# 64 MiB written once in a fresh process: the minor page faults that took
_FAULTS = ("import {first}, resource, torch; f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt; "
           "t = torch.empty(16 * 2**20); t.fill_(1.0); "
           "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)")


def _faults(first: str, env: dict) -> int:
    out = subprocess.run([sys.executable, "-c", _FAULTS.format(first=first)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def _thp_available() -> bool:
    path = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return sys.platform.startswith("linux") and path.exists() and "[never]" not in path.read_text()


def test_the_command_sets_the_allocator_switch_before_torch_unless_the_user_did():
    env = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
    code = "import attnviz.cli, os; print(os.environ.get('THP_MEM_ALLOC_ENABLE'))"
    run = lambda e: subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,  # noqa: E731
                                   timeout=120).stdout.strip()
    assert run(env) == "1"
    assert run({**env, "THP_MEM_ALLOC_ENABLE": "0"}) == "0"  # the user's own setting wins


@pytest.mark.skipif(not _thp_available(), reason="this kernel gives no transparent huge pages")
def test_a_large_tensor_is_first_touched_in_huge_pages_through_the_command():
    env = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
    with_cli = _faults("attnviz.cli", env)
    # control: the same tensor in a process where the user turned it off takes a fault per 4 KiB page
    without = _faults("attnviz.cli", {**env, "THP_MEM_ALLOC_ENABLE": "0"})
    assert without > 8 * with_cli, (with_cli, without)
