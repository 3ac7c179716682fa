"""The desktop app (PySide6 + pyqtgraph). Only attnviz.gui and attnviz.export import Qt."""

from attnviz.gui.pyqtgraph_mirrors import install_lazy_mirrors

# before anything here imports pyqtgraph: its Qt mirrors filled on demand, not all ~1,000 PySide6 types
# created at its import (0.2 s of CPU on the way to the first map; see pyqtgraph_mirrors)
import os as _os

if _os.environ.get("ATTNVIZ_STARTUP_LAZY_MIRRORS", "") != "0":
    install_lazy_mirrors()
