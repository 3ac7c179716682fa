"""What the app's start-up steps will need, started on a thread at launch (Qt-free: the CLI starts it
before PySide6 is imported).

The GUI thread's first map waits for numpy (pyqtgraph needs it), for the views' Qt-free dependencies and
for the import plans of pyqtgraph and the views (:mod:`attnviz.gui.panels.window_startup`). Started when
the window was shown, that work ended after the GUI thread had created PySide6's types, which then sat
idle; started at launch it overlaps with importing PySide6 and building the window instead. Measured on
two cores (``measure_startup``, 5 launches each, alternating, other work running): median first map
1.09 s against 1.21 s, median CPU 1.06 s against 1.15 s; the first paint ~0.07 s later.
"""

from __future__ import annotations

from attnviz.gui.heavy_imports import import_modules_job, prefetch, pyqtgraph_plan

__all__ = ["VIEW_DEPENDENCIES", "EXTRA_VIEW_MODULES", "views_plan", "prefetch_startup_imports"]

# Qt-free modules the attention views import: loaded on a worker first, so importing the views on the
# GUI thread afterwards is quick. What only the Training and Walkthrough pages need waits until the
# first attention map is on screen (window_pages.PAGE_DEPENDENCIES): every import before it competes
# with torch's for the one interpreter lock, and delays the map.
VIEW_DEPENDENCIES = ("attnviz.capture", "attnviz.analysis", "attnviz.runtime")
# the view modules the views package does not import itself (discover_view_classes adds them)
EXTRA_VIEW_MODULES = ("attnviz.gui.views.dataset_view", "attnviz.gui.views.qk_embedding_view")


def views_plan() -> list:
    """The import plan of the views package (Qt-free: reads files, or the cached plan; a worker's job)."""
    from attnviz.gui.plan_cache import cached_import_plan

    return cached_import_plan("attnviz.gui.views", within="attnviz.gui", extra=EXTRA_VIEW_MODULES)


def prefetch_startup_imports() -> None:
    """Start what the window's start-up job will need, in its order (a second call does nothing; the
    stored opening trace is read by the job itself: which model opens is the window's call)."""
    prefetch("pyqtgraph", pyqtgraph_plan)
    prefetch("view-dependencies", import_modules_job, list(VIEW_DEPENDENCIES))
    prefetch("views", views_plan)
