"""How many torch threads the app's model runs use: every core for a large model, one left for a small one."""

from __future__ import annotations

import torch

from attnviz.device import LARGE_MODEL_PARAMS, app_threads


def test_small_models_leave_a_core_to_the_gui_and_large_ones_use_every_core():
    assert app_threads(100_000, cores=2) == 1
    assert app_threads(100_000, cores=8) == 7
    assert app_threads(100_000, cores=1) == 1
    assert app_threads(LARGE_MODEL_PARAMS - 1, cores=4) == 3
    assert app_threads(LARGE_MODEL_PARAMS, cores=4) == 4
    assert app_threads(110_000_000, cores=2) == 2


def test_loading_a_model_in_the_app_sets_its_threads():
    from attnviz.gui.panels.model_jobs import load_model_job

    before = torch.get_num_threads()
    try:
        res = load_model_job("coref", device="cpu")
        assert torch.get_num_threads() == app_threads(sum(p.numel() for p in res.loaded.model.parameters()))
        # a model past the threshold: every core
        from types import SimpleNamespace

        from attnviz.gui.panels.model_jobs import _use_threads_for

        wide = torch.nn.Linear(5000, 4000)  # 20,004,000 parameters
        _use_threads_for(SimpleNamespace(model=wide))
        assert torch.get_num_threads() == app_threads(20_004_000)
        assert app_threads(20_004_000) == app_threads(LARGE_MODEL_PARAMS)
    finally:
        torch.set_num_threads(before)
