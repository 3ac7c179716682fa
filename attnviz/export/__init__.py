"""Figures for lectures from the command line: off-screen Qt set-up, the lecture pack, ``--data`` files.

Built on the views, the figure registry (``attnviz.figures.registry``) and the renderer
(``attnviz.figures.render``) that the app uses too; the app never imports this package.
"""
