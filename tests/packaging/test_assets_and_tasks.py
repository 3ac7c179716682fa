"""Where assets are found (override, installed package data, checkout) and tasks a bundler can see."""

from __future__ import annotations

import ast
import inspect

import pytest

import attnviz.io.assets as assets
from attnviz.tasks import TASKS, _import_task_module, get_task


def test_override_then_package_data_then_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNVIZ_ASSETS", raising=False)
    monkeypatch.setattr(assets, "packaged_assets", lambda: None)
    assert assets.assets_dir() == assets.source_assets()
    packaged = tmp_path / "site" / "attnviz" / "_assets"
    (packaged / "icons").mkdir(parents=True)
    (packaged / "icons" / "attnviz.svg").write_text("<svg/>")
    monkeypatch.setattr(assets, "packaged_assets", lambda: packaged)
    assert assets.assets_dir() == packaged and assets.icon_path() == packaged / "icons" / "attnviz.svg"
    override = tmp_path / "mine"
    override.mkdir()
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(override))
    assert assets.assets_dir() == override
    assert assets.icon_path() == packaged / "icons" / "attnviz.svg"  # an override without icons


def test_every_task_module_is_imported_by_an_explicit_statement():
    tree = ast.parse(inspect.getsource(_import_task_module))
    spelled = {f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names}
    assert {module for module, _ in TASKS.values()} <= spelled


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_loads_through_the_static_imports(name):
    module, cls = TASKS[name]
    assert hasattr(_import_task_module(module), cls)
    assert get_task(name).name == name
