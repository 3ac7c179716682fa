"""Execute a notebook in a kernel of its own and write it with its outputs.

Run as a child process (``python tests/docs/notebook_run.py IN OUT WORKDIR``): nbclient leaves asyncio
and zmq threads running in the process that drives the kernel, and Qt event processing in the suite's
process once crashed beside them. ``python tests/docs/notebook_run.py --ship`` re-executes
docs/attnviz_in_a_notebook.ipynb in place, the copy shipped with its outputs.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "attnviz_in_a_notebook.ipynb"


def execute(src: Path, dst: Path, workdir: Path) -> None:
    import nbclient
    import nbformat

    nb = nbformat.read(src, as_version=4)
    # no timings in the cells: a re-shipped notebook then differs only where its outputs do
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(workdir)}}).execute()
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, dst)


if __name__ == "__main__":
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if sys.argv[1:] == ["--ship"]:
        with tempfile.TemporaryDirectory() as tmp:
            execute(NOTEBOOK, NOTEBOOK, Path(tmp))
    else:
        execute(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
