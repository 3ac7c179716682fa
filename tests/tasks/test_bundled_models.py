"""Every bundled model reproduces its recorded held-out metrics on fresh data and meets its task's targets."""

from __future__ import annotations

import numbers

import pytest
import torch

from attnviz.io import assets_dir, bundled_models
from attnviz.models.checkpoint import load_checkpoint
from attnviz.runtime import task_of
from attnviz.runtime.opening import read_opening_trace
from attnviz.tasks import get_task
from attnviz.training.make_assets import check_targets

FRESH_SEED = 777  # training recorded metrics with the task's default seed; this draws other held-out data
ABS_TOL = 0.03  # for rates in [0, 1]: 1000 fresh held-out examples keep sampling noise well below this
REL_TOL = 0.03  # for losses


def _close(recorded: float, fresh: float) -> bool:
    if 0.0 <= recorded <= 1.0 and 0.0 <= fresh <= 1.0:
        return abs(recorded - fresh) <= ABS_TOL
    return abs(recorded - fresh) <= REL_TOL * max(abs(recorded), 1e-9)


# Bundled models known to miss a target: the miss is stated here and in the issue note. strict=True makes
# the test fail as soon as a retrained model meets the target, so this list cannot go stale.
KNOWN_MISSES: dict[str, str] = {}
_FRESH: dict = {}


def _evaluate(name):
    if name not in _FRESH:
        loaded = load_checkpoint(name, device="cpu")
        task = task_of(loaded)
        assert task is not None, f"{name} names no built-in task ({loaded.task!r})"
        with torch.no_grad():
            _FRESH[name] = (loaded, task, task.evaluate(loaded, seed=FRESH_SEED))
    return _FRESH[name]


@pytest.mark.parametrize("name", bundled_models())
def test_bundled_model_reproduces_its_metrics(name):
    loaded, task, fresh = _evaluate(name)
    recorded = loaded.info["metrics"]
    assert loaded.info.get("complete") is True
    for key, value in recorded.items():
        if isinstance(value, float):  # rates and losses; counts and head indices are not measurements
            assert isinstance(fresh[key], numbers.Real)
            assert _close(value, fresh[key]), f"{name}: {key} recorded {value}, fresh {fresh[key]}"


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[n])) if n in KNOWN_MISSES else n
    for n in bundled_models()
])
def test_bundled_model_meets_its_targets(name):
    loaded, task, fresh = _evaluate(name)
    assert check_targets(task, fresh) == [], f"{name} misses its targets on fresh data"
    assert check_targets(task, loaded.info["metrics"]) == []


@pytest.mark.parametrize("name", bundled_models())
def test_text_models_ship_an_opening_trace_of_their_current_weights(name):
    """The app draws this before torch loads; stale after retraining until `make_assets --opening-only`."""
    folder = assets_dir() / "models" / name
    task = get_task(load_checkpoint(name, device="cpu").task)
    example = task.example_input()
    if not isinstance(example, str):
        assert read_opening_trace(folder) is None
        return
    trace = read_opening_trace(folder, text=example)
    assert trace is not None, f"{name}: opening.npz missing or stale: run python -m attnviz.training.make_assets --opening-only"
    assert trace.meta["model_name"] == name and trace.meta["input_text"] == example
