"""Fixtures of the encoder–decoder tests: one tiny folder per family, loaded once per session."""

from __future__ import annotations

import pytest
import torch

from .factories import FAMILIES, make_encdec


@pytest.fixture(scope="session")
def encdec_folders(tmp_path_factory):
    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("encdec")
    return {name: make_encdec(name, root / name, seed=i) for i, name in enumerate(FAMILIES)}


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    before = torch.get_num_threads()  # tiny models on a shared machine: threads cost more than they save
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def encdec_loaded(encdec_folders):
    from attnviz.hf.loader import load_hf_model

    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = load_hf_model(encdec_folders[name], device="cpu")
        return cache[name]

    return get
