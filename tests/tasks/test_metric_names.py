"""Metric keys get human names on screen; every key a bundled model reports has one."""

import json
from pathlib import Path

import pytest

from attnviz.tasks.metric_names import METRIC_NAMES, format_metric, format_metrics, metric_name

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "models"


def test_known_keys_read_as_words_and_values_as_people_read_them():
    assert metric_name("anti_diagonal_layer_mean") == "attends to the mirrored letter (best layer, heads averaged)"
    assert format_metric("accuracy", 0.9916666) == "99.2%"
    assert format_metric("induction_layer", 1) == "1"
    assert format_metric("loss", 1.5746841) == "1.575"
    assert format_metrics({"accuracy": 0.5, "n_test": 360}) == "accuracy 50.0%"
    assert format_metrics({"accuracy": 0.5, "n_test": 360}, counts=True) == "accuracy 50.0%, held-out examples 360"
    assert metric_name("some_new_score") == "some new score"  # never an underscore on screen


@pytest.mark.parametrize("config", sorted(ASSETS.glob("*/config.json")), ids=lambda p: p.parent.name)
def test_every_bundled_metric_has_a_name(config):
    metrics = json.loads(config.read_text()).get("metrics") or {}
    missing = sorted(set(metrics) - set(METRIC_NAMES))
    assert not missing, f"{config.parent.name}: add human names for {missing} to attnviz/tasks/metric_names.py"
