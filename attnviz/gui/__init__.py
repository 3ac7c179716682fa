"""The desktop app (PySide6 + pyqtgraph). Only attnviz.gui and attnviz.export import Qt."""
