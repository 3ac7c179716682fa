"""What the start-up imports, and the import plans the GUI thread steps through (Qt-free: made on the views lane).

The plans are made from the sources, or read from the user's cache when the sources are unchanged
(:mod:`.plan_cache`). Why the start-up is built this way: :mod:`attnviz.gui.startup`.
"""

from __future__ import annotations

from attnviz.gui.gc_pause import gc_paused

__all__ = ["VIEW_DEPENDENCIES", "EXTRA_VIEW_MODULES", "PYQTGRAPH_NEEDS", "views_plan", "pyqtgraph_plan"]

# Qt-free modules the attention views import: loaded on a worker first, so importing the views on the
# GUI thread afterwards is quick. What only the Training and Walkthrough pages need waits until the
# first attention map is on screen (window.pages.PAGE_DEPENDENCIES): every import before it competes
# with torch's for the one interpreter lock, and delays the map.
VIEW_DEPENDENCIES = ("attnviz.capture", "attnviz.analysis", "attnviz.runtime")
# the view modules the views package does not import itself (discover_view_classes and the window add them)
EXTRA_VIEW_MODULES = ("attnviz.gui.views.dataset_view", "attnviz.gui.views.qk_embedding_view",
                      "attnviz.gui.views.compare_view")
# Qt-free modules pyqtgraph imports: on a worker, before the GUI thread starts on pyqtgraph (if the
# worker were importing numpy when the GUI thread needs it, the GUI thread would wait for the whole import)
PYQTGRAPH_NEEDS = ("numpy", "xml.etree.ElementTree", "weakref", "warnings", "subprocess", "importlib.resources")


def pyqtgraph_plan() -> list:
    """Import what pyqtgraph needs that is Qt-free, then return pyqtgraph's import plan (a worker's job)."""
    import importlib

    from attnviz.gui.startup.plan_cache import cached_import_plan

    with gc_paused():
        for name in PYQTGRAPH_NEEDS:
            importlib.import_module(name)
    return cached_import_plan("pyqtgraph")


def views_plan() -> list:
    """The import plan of the views package (Qt-free: reads files, or the cached plan; a worker's job)."""
    from attnviz.gui.startup.plan_cache import cached_import_plan

    return cached_import_plan("attnviz.gui.views", within="attnviz.gui", extra=EXTRA_VIEW_MODULES)
