"""GUI test fixtures: isolated settings, tiny model directories, and a window factory that checks leaks.

Every test gets its own settings file (``ATTNVIZ_SETTINGS``, tests/conftest.py) and an assets folder
(``ATTNVIZ_ASSETS``) holding tiny seeded models, so nothing depends on the bundled models being
trained or on the user's settings.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

SENTENCES = ["the animal did not cross the street because it was too tired",
             "the cat sat on the mat and it was happy", "a dog is a good friend"]


def _tiny(kind: str, seed: int, **cfg):
    import torch

    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model

    config = ModelConfig(kind=kind, n_layers=2, n_heads=2, d_model=16, mlp_ratio=2.0, **cfg)
    torch.manual_seed(seed)
    model = build_model(config)
    with torch.no_grad():  # a larger spread than the training init, so heads differ visibly
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model.eval(), config


def write_tiny_models(root) -> dict[str, str]:
    """Create tiny model directories under ``root/models``; returns name → path."""
    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.text.tokenizer import Tokenizer

    models = root / "models"
    out = {}
    word = Tokenizer.build("word", SENTENCES, prefix=["[CLS]"])
    m, c = _tiny("encoder", 0, vocab_size=len(word.vocab), max_len=12, n_classes=2)
    out["tiny-encoder"] = save_checkpoint(models / "tiny-encoder", m, c,
                                          {"task": "tiny-classify", "labels": ["negative", "positive"],
                                           "metrics": {"accuracy": 0.875}}, tokenizer=word)
    char = Tokenizer.build("char", SENTENCES)
    m, c = _tiny("decoder", 1, vocab_size=len(char.vocab), max_len=64, head="lm")
    out["tiny-decoder"] = save_checkpoint(models / "tiny-decoder", m, c, {"task": "tiny-lm"}, tokenizer=char)
    m, c = _tiny("vit", 2, image_size=8, patch_size=2, in_chans=3, n_classes=3)
    out["tiny-vit"] = save_checkpoint(models / "tiny-vit", m, c,
                                      {"task": "tiny-shapes", "labels": ["circle", "square", "triangle"]})
    bpe = Tokenizer.build("bpe", SENTENCES * 3, prefix=["[CLS]"], vocab_size=60)
    m, c = _tiny("encoder", 3, vocab_size=len(bpe.vocab), max_len=32, n_classes=2)
    out["tiny-bpe"] = save_checkpoint(models / "tiny-bpe", m, c, {"task": "tiny-classify"}, tokenizer=bpe)
    return {k: str(v) for k, v in out.items()}


@pytest.fixture(scope="session")
def tiny_assets(tmp_path_factory):
    root = tmp_path_factory.mktemp("assets")
    write_tiny_models(root)
    return root


@pytest.fixture
def assets(tiny_assets, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_ASSETS", str(tiny_assets))
    return tiny_assets


def _settle(qapp) -> None:
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool

    from attnviz.gui.workers import wait_for_workers

    QThreadPool.globalInstance().waitForDone(30000)
    wait_for_workers(30000)  # every lane: the window's model lane, the views' lane
    # the window freezes the heap after start-up (attnviz.gui.workers.gc_paused); a test must see
    # everything it created collected, so thaw it first
    gc.unfreeze()
    for _ in range(3):
        # pyqtgraph's context menus are parentless and owned by Python items: collect them too
        gc.collect()
        qapp.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _dispose(windows: list) -> None:
    import shiboken6

    for win in windows:
        if shiboken6.isValid(win):
            win.close()
            shiboken6.delete(win)  # now, with its children; deleteLater would wait for an event loop
    windows.clear()  # (a helper function, so no loop variable keeps the last window alive)


@pytest.fixture
def make_window(qapp, qtbot, assets):
    """Factory: ``make_window(model=..., text=...)`` → a shown MainWindow on the tiny models.

    At teardown every window is closed and deleted; a top-level widget left behind fails the test.
    """
    import shiboken6
    from PySide6.QtWidgets import QApplication

    from attnviz.gui.app import create_application
    from attnviz.gui.window.main_window import MainWindow

    create_application()
    # C++ addresses, not id(): a wrapper collected between here and teardown comes back as a new Python object,
    # so one widget left by an earlier test would fail every later test (137 errors in one CI run)
    before = {shiboken6.getCppPointer(w)[0] for w in QApplication.topLevelWidgets()}
    windows = []

    def factory(start: bool = True, **kwargs) -> MainWindow:
        win = MainWindow(autostart=False, **kwargs)
        windows.append(win)
        win.show()
        if start:
            win.start()
        return win

    yield factory
    _dispose(windows)
    _settle(qapp)
    leaked = [w for w in QApplication.topLevelWidgets()
              if shiboken6.getCppPointer(w)[0] not in before and w.objectName() != "qtooltip_label"]
    # the C++ class and the children name an anonymous widget (pyqtgraph's menus hold parentless QWidgets)
    leaked = [f"{type(w).__name__}({w.objectName() or w.windowTitle()!r}, {w.metaObject().className()}, children "
              f"{[type(c).__name__ + (':' + c.objectName() if c.objectName() else '') for c in w.children()][:6]})"
              for w in leaked]
    assert not leaked, f"top-level widgets leaked by the test: {leaked}"


def rgb_image(size: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)


# the data-set views' tests (tests/gui/test_views_dataset*.py): the induction model on a repeated word
@pytest.fixture(scope="module")
def induction_trace():
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model("induction", device="cpu"), text="dragonflydragonfly")
