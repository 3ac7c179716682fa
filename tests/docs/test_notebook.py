"""docs/attnviz_in_a_notebook.ipynb runs headless (nbclient) and its outputs hold the figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "attnviz_in_a_notebook.ipynb"


def test_the_notebook_executes_and_shows_its_figures(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    pytest.importorskip("nbclient", reason="the test extra installs nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code")  # stored clean
    # executed from a process of its own: nbclient leaves asyncio and zmq threads running in the process
    # that drives the kernel, and Qt event processing in the suite's process once crashed beside them
    done = tmp_path.parent / f"{tmp_path.name}-executed.ipynb"
    code = ("import sys, nbformat, nbclient; nb = nbformat.read(sys.argv[1], as_version=4); "
            "nbclient.NotebookClient(nb, timeout=600, kernel_name='python3', "
            "resources={'metadata': {'path': sys.argv[2]}}).execute(); nbformat.write(nb, sys.argv[3])")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run([sys.executable, "-c", code, str(NOTEBOOK), str(tmp_path), str(done)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    nb = nbformat.read(done, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    data = [o.get("data", {}) for o in outputs]
    pngs = [d["image/png"] for d in data if "image/png" in d]
    svgs = [d["image/svg+xml"] for d in data if "image/svg+xml" in d]
    pages = [d["text/html"] for d in data if "text/html" in d]
    assert len(pngs) == 2 and len(svgs) == 2  # the head map and the all-heads grid
    assert all(s.lstrip().startswith("<?xml") or "<svg" in s for s in svgs) and "Where 'it' looks" in svgs[0]
    assert len(pages) == 1 and pages[0].startswith("<iframe srcdoc=")
    text = "".join(o.get("text", "") for o in outputs)
    assert "'it' looks most at" in text
    assert "this model has no cross-attention (part 'cross' needs an encoder–decoder)" in text
    assert list(tmp_path.iterdir()) == []  # the notebook saved its PDF in a temporary folder, not here
