"""The projection check's comparison (attnviz.hf.projections._close): equal up to float rounding, non-finite
entries in the same places. Controls: a difference beyond rounding, a NaN in another place, another shape."""

from __future__ import annotations

import torch

from attnviz.hf.projections import _close


def test_close_up_to_rounding_and_in_the_same_non_finite_places():
    a = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(0))
    assert _close(a, a + 1e-7)
    assert not _close(a, a + 1e-2)  # control: a wrong reading is wrong by far more than rounding
    b = a.clone()
    b[0, 1, 2] = float("nan")
    assert _close(b, b.clone())
    moved = a.clone()
    moved[0, 1, 3] = float("nan")
    assert not _close(b, moved)  # control: NaN in another place
    assert not _close(b, a)  # control: NaN on one side only
    assert _close(torch.full((2, 2), float("inf")), torch.full((2, 2), float("inf")))
    assert not _close(a, a[:, :4])  # control: another shape
    assert _close(a.half(), a.half())
