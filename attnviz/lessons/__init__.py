"""Scenes (one saved exploration), lessons (scenes with titles and claims) and the claims' measurements.

Qt-free; the app's lesson mode and ``attnviz lesson`` / ``attnviz export --scene/--lesson`` build on it.
"""
