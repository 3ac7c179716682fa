"""Fixtures of the Hugging Face tests: tiny model folders per family, loaded once per session."""

from __future__ import annotations

import pytest
import torch

from .factories import FAMILY_IDS, make_model


@pytest.fixture(scope="session")
def hf_folders(tmp_path_factory):
    """One tiny folder per family (session-wide: building them costs a few seconds)."""
    root = tmp_path_factory.mktemp("hf")
    return {name: make_model(name, root / name, seed=i) for i, name in enumerate([*FAMILY_IDS, "llama"])}


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    # tiny models on a shared 2-core machine: intra-op threads cost more than they save
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class _Cache(dict):
    """name → LoadedModel, loaded on first use."""

    def __init__(self, folders):
        super().__init__()
        self.folders = folders

    def __missing__(self, name):
        from attnviz.hf.loader import load_hf_model

        self[name] = load_hf_model(self.folders[name], device="cpu")
        return self[name]


@pytest.fixture(scope="session")
def hf_loaded(hf_folders):
    return _Cache(hf_folders)
