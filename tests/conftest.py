"""Suite-wide settings: tiny models run faster on one thread, and no test writes into the checkout."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(autouse=True)
def _run_in_a_scratch_folder(tmp_path, monkeypatch):
    """Every test runs with its own empty working directory, so a relative output path (``models/coref``
    when ``train`` gets no ``--out``) can never land in the checkout."""
    monkeypatch.chdir(tmp_path)
