"""Every figure the app, ``attnviz export``, the lecture pack and the notebook draw, in one place.

- :mod:`attnviz.figures.registry`: the figures by name (which view draws each, for which models) and
  their export style; a plain table, so listing figures imports no Qt.
- :mod:`attnviz.figures.render`: paints a view off-screen into PNG, SVG or PDF with the drawing code the
  screen uses (title and caption bands, slide sizes, atomic writes).
- :mod:`attnviz.figures.targets`: the three kinds of file a painter draws into.
- :mod:`attnviz.figures.scenes`: a lesson scene (or a whole lesson) as a figure with its measured caption.

The package sits above the views it draws and below the app's window, ``attnviz.export``,
``attnviz.commands`` and ``attnviz.api`` (pyproject ``[tool.importlinter]``). Nothing is imported here:
importing :mod:`attnviz.figures.registry` imports no Qt (pyqtgraph and the views load when a figure is styled or built).
"""
