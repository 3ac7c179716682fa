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


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Each test writes its own settings file: never the user's, never another test's. Suite-wide, since
    export, lesson and HF tests open windows too: a user's saved settings (presentation mode, a last model
    that no longer exists) once changed what those tests drew."""
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("ATTNVIZ_SETTINGS", str(path))
    return path


@pytest.fixture(autouse=True, scope="session")
def _private_data_dir(tmp_path_factory):
    """`attnviz.cli.main` writes a log file into the user's data folder: never the real one in tests."""
    import os

    # and the app's cache (import plans, attnviz.io.cache): never the user's either
    olds = {name: os.environ.get(name) for name in ("ATTNVIZ_DATA_DIR", "ATTNVIZ_CACHE_DIR")}
    os.environ["ATTNVIZ_DATA_DIR"] = str(tmp_path_factory.mktemp("attnviz-data"))
    os.environ["ATTNVIZ_CACHE_DIR"] = str(tmp_path_factory.mktemp("attnviz-cache"))
    yield
    for name, old in olds.items():
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
