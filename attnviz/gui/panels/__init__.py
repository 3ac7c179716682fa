"""The main window's panels: model, input (text, token strip, image), prediction, training, views area.

Modules are imported by name where needed (``training_panel`` pulls in pyqtgraph and torch, which
start-up avoids), so this package exports nothing itself.
"""

__all__: list[str] = []
