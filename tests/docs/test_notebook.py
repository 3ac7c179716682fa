"""docs/attnviz_in_a_notebook.ipynb is shipped with its outputs (a code host shows the figures), and
re-executing it headless (nbclient, in a child process) gives the same outputs: the same figures, the
same numbers. Regenerate the shipped copy with ``python tests/docs/notebook_run.py --ship``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "attnviz_in_a_notebook.ipynb"
RUNNER = Path(__file__).with_name("notebook_run.py")
IMAGES = ("image/png", "image/svg+xml")


def _summary(nb) -> list:
    """Per code cell, each output as (type, mime types, text, image widths): what must not change."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outs = []
        for o in cell.outputs:
            data = o.get("data", {})
            widths = {k: v.get("width") for k, v in o.get("metadata", {}).items() if k in IMAGES}
            outs.append((o.output_type, sorted(data), o.get("text", "") + data.get("text/plain", ""), widths))
        cells.append(outs)
    return cells


def _figures(nb) -> list[list[str]]:
    return [sorted(k for o in c.outputs for k in o.get("data", {}) if k in IMAGES + ("text/html",))
            for c in nb.cells if c.cell_type == "code"]


def test_the_shipped_notebook_holds_its_figures():
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code)  # every cell ran and kept what it showed
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    figures = [f for f in _figures(nb) if f]
    # one image type per figure (two PNGs, one SVG asked for); the page with its still picture beside it
    assert figures == [["image/png"], ["image/png"], ["image/svg+xml"], ["image/png", "text/html"]]
    page = next(o for c in code for o in c.outputs if "text/html" in o.get("data", {}))
    assert page.data["text/html"].startswith("<iframe srcdoc=") and "sandbox='allow-scripts'" in page.data["text/html"]
    assert "&lt;noscript&gt;" in page.data["text/html"]  # the still picture where scripts cannot run
    head_map = next(o for c in code for o in c.outputs if "image/png" in o.get("data", {}))
    assert head_map.metadata["image/png"] == {"width": 1000}  # size=(1000, 600) shows 1000 px wide


def test_the_notebook_reexecutes_to_the_same_outputs(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    pytest.importorskip("nbclient", reason="the test extra installs nbclient")
    done = tmp_path.parent / f"{tmp_path.name}-executed.ipynb"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run([sys.executable, str(RUNNER), str(NOTEBOOK), str(done), str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    shipped, fresh = nbformat.read(NOTEBOOK, as_version=4), nbformat.read(done, as_version=4)
    # the same figures (types, sizes) and the same numbers; after a deliberate change of what the notebook
    # shows, re-ship it: python tests/docs/notebook_run.py --ship
    assert _summary(fresh) == _summary(shipped), "the shipped notebook's outputs are stale (see the comment)"
    text = "".join(o.get("text", "") for c in fresh.cells if c.cell_type == "code" for o in c.outputs)
    assert "'it' looks most at" in text
    assert "this model has no cross-attention (part 'cross' needs an encoder–decoder)" in text
    svg = next(o.data["image/svg+xml"] for c in fresh.cells if c.cell_type == "code" for o in c.outputs
               if "image/svg+xml" in o.get("data", {}))
    assert "<svg" in svg and "animal" in svg  # text stays text in the SVG
    assert list(tmp_path.iterdir()) == []  # the notebook saved its PDF in a temporary folder, not here
    # negative control: a number changed in the shipped copy is caught
    shipped.cells[4].outputs[0]["text"] = shipped.cells[4].outputs[0]["text"].replace("1.000", "0.999", 1)
    assert _summary(fresh) != _summary(shipped)
