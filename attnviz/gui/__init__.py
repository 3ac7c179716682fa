"""The desktop app (PySide6 + pyqtgraph). Only attnviz.gui and attnviz.export import Qt; how it starts:
:mod:`attnviz.gui.startup`."""
