"""Every bundled model reproduces its recorded held-out metrics on fresh data and meets its task's targets."""

from __future__ import annotations

import numbers

import pytest
import torch

from attnviz.models.checkpoint import bundled_models, load_checkpoint
from attnviz.pipeline import task_of
from attnviz.training.make_assets import check_targets

FRESH_SEED = 777  # training recorded metrics with the task's default seed; this draws other held-out data
ABS_TOL = 0.03  # for rates in [0, 1]: 1000 fresh held-out examples keep sampling noise well below this
REL_TOL = 0.03  # for losses


def _close(recorded: float, fresh: float) -> bool:
    if 0.0 <= recorded <= 1.0 and 0.0 <= fresh <= 1.0:
        return abs(recorded - fresh) <= ABS_TOL
    return abs(recorded - fresh) <= REL_TOL * max(abs(recorded), 1e-9)


@pytest.mark.parametrize("name", bundled_models())
def test_bundled_model_reproduces_its_metrics(name):
    loaded = load_checkpoint(name, device="cpu")
    task = task_of(loaded)
    assert task is not None, f"{name} names no built-in task ({loaded.task!r})"
    recorded = loaded.info["metrics"]
    assert loaded.info.get("complete") is True
    with torch.no_grad():
        fresh = task.evaluate(loaded, seed=FRESH_SEED)
    for key, value in recorded.items():
        if isinstance(value, float):  # rates and losses; counts and head indices are not measurements
            assert isinstance(fresh[key], numbers.Real)
            assert _close(value, fresh[key]), f"{name}: {key} recorded {value}, fresh {fresh[key]}"
    assert check_targets(task, fresh) == [], f"{name} misses its targets on fresh data"
    assert check_targets(task, recorded) == []
