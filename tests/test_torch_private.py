"""Each private PyTorch name attnviz reads exists in the installed torch, does what attnviz relies on, and is
named nowhere else (attnviz/torch_private.py is the one place).

Both ends of the supported versions: the lowest torch pyproject.toml allows (2.13) is the installed one, so these
tests run at it; a torch wheel is too large to fetch per run as the other libraries' lowest versions are
(tests/version_ends.py), so the first test fails once the installed torch moves past the lower bound."""

from __future__ import annotations

import re
from pathlib import Path

import torch

import attnviz
from attnviz import torch_private

PACKAGE = Path(attnviz.__file__).parent


def test_the_installed_torch_is_the_lowest_supported():
    from tests.version_ends import declared_lowest

    lowest = declared_lowest("torch").rsplit(".", 1)[0]  # "2.13"
    installed = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    assert installed == lowest, (f"torch {installed} installed, {lowest} declared the lowest: the private names "
                                 f"are no longer checked at the lowest supported torch")


def test_tensor_version_counts_in_place_changes():
    t = torch.zeros(3)
    before = torch_private.tensor_version(t)
    assert isinstance(before, int)
    t.add_(1.0)
    assert torch_private.tensor_version(t) == before + 1
    t2 = t + 1  # not in place: a new tensor, the old counter unchanged
    assert torch_private.tensor_version(t) == before + 1 and t2 is not t


def test_cpu_flash_kernel_exists_and_returns_the_log_sum_exp():
    op = torch_private.cpu_flash_attention()
    assert op is not None, f"torch {torch.__version__} lacks the CPU flash kernel: the fallback runs (slower)"
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 4, generator=g) for _ in range(3))
    out, lse = op(q, k, v, 0.0, False, scale=0.5)[:2]
    scores = q @ k.transpose(-1, -2) * 0.5
    torch.testing.assert_close(lse.reshape(1, 2, 5), torch.logsumexp(scores, -1))
    torch.testing.assert_close(out, torch.softmax(scores, -1) @ v)
    # negative control: a wrong scale gives another log-sum-exp
    assert not torch.allclose(lse.reshape(1, 2, 5), torch.logsumexp(q @ k.transpose(-1, -2), -1))


def test_private_torch_names_live_in_one_module():
    names = re.compile(r"\._version\b|_scaled_dot_product_flash_attention_for_cpu")
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "torch_private.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if names.search(code) and "``" not in code:
                found.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert found == []


def test_output_head_cache_leaves_no_attribute_on_the_weight():
    from attnviz.hf.output_head import _max_abs

    w = torch.nn.Parameter(torch.tensor([[1.0, -3.0], [2.0, 0.5]]))
    before = set(vars(w)) if hasattr(w, "__dict__") else set()
    assert _max_abs(w) == 3.0
    assert (set(vars(w)) if hasattr(w, "__dict__") else set()) == before
    with torch.no_grad():
        w[0, 0] = -7.0  # in place: the cache must see it
    assert _max_abs(w) == 7.0
