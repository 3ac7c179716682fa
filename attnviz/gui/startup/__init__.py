"""How the app starts: what runs on which thread before the first attention map, and why.

Goals (``attnviz bench --only gui`` and ``--only startup`` print them; no test asserts a time): the first
attention map within 1.0 s of launch on two cores, and the window never frozen for more than 100 ms on the way
to it or to the live model's map. The obstacle: before the first map the GUI thread needs PySide6,
pyqtgraph and the views imported and the window built (~1 s of CPU), and torch's import (~1 GB mapped, ~0.5 s
of CPU) competes for the same interpreter lock. Everything below serves one of two aims: *do less before the
first map*, or *cut what must be done into event-loop turns short enough not to freeze the window*.

Timeline (threads: **GUI**, **prefetch** = a plain thread, **views lane** = a torch-free worker, **model
lane** = the worker that owns torch and the model; :mod:`attnviz.gui.workers`)

1. GUI, ``attnviz.cli.main``: the collector is held (``hold_gc``) and the prefetch thread is started
   (``prefetch``), both before PySide6 is imported (:mod:`.prefetch`).
2. prefetch thread, meanwhile: numpy and pyqtgraph's other Qt-free imports, then pyqtgraph's import plan;
   the views' Qt-free dependencies (``attnviz.capture``, ``analysis``, ``runtime``), then the views'
   import plan. A plan lists a package's modules leaves first and splits its ``__init__`` into statements
   (:mod:`.stepped_import`); it is read from the user's cache when the sources are unchanged
   (``plan_cache``, :mod:`.plan_cache`). All file reading and Qt-free imports: no Qt here.
3. GUI: PySide6, the QApplication and the main window of plain Qt widgets; the first paint (~0.4 s).
4. GUI, ``MainWindow.start()`` after that paint (:mod:`.window`): the views lane takes the prefetched plans
   (or makes them, when nothing was prefetched) and reads the bundled model's stored opening trace. The GUI
   thread runs a generator, one item per event-loop turn:
   PySide6's lazily built types created a few dozen per turn (``qt_warm_up``: pyqtgraph's import copies every
   name of QtCore/QtGui/QtWidgets, which creates all ~1,000 of them) → pyqtgraph, then the views, one plan
   step per turn (``stepped_import``) → every view docked, those on screen built half a view per turn, the
   colour maps' tables read → the stored opening trace drawn: **the first map**. Then the collector runs
   again (everything built so far is frozen out of later collections).
5. model lane, a frame after the first map: torch's native libraries are ``dlopen``-ed through ctypes, which
   releases the interpreter lock (``native_preload``, :mod:`.native_preload`), then ``import torch`` and the
   model; its own run of the same sentence replaces the stored trace with the same numbers: **the live map**.
6. After the live map: the Training and Walkthrough pages (their imports on a worker, their Qt modules and
   widgets stepped on the GUI thread: ``panels/window_pages.py``), the views not on screen in idle turns,
   torch's rarely used modules on the model lane.

Rules that are not trade-offs (never switch these off)

- Modules that define or use Qt classes (pyqtgraph, ``attnviz.gui.*``) are imported on the GUI thread only:
  PySide6 creates types and enums lazily, and a worker doing so while the GUI thread uses Qt is a race.
- torch is not imported until pyqtgraph and the views are: importing torch on a worker during pyqtgraph's
  stepped import crashed PySide6 6.11 (a segfault in its attribute lookup while painting, 4-6 of 6 runs;
  0 of 8 with torch held back; ``tests/gui/test_startup_order.py`` fails on the old order).
- Start-up uses only public interfaces of PySide6, pyqtgraph and torch; nothing replaces another library's
  functions or module attributes. A stepped import is ordinary ``importlib.import_module`` calls and the
  package's own statements, so a wrong plan only makes one step longer, never the result different.

Switches: each mechanism named above in ``code`` is switched off by ``ATTNVIZ_STARTUP_<NAME>=0``
(:mod:`.switches`), and ``attnviz bench --only startup --repeat N`` launches the app N times with all of
them on and N times with each one off, interleaved, and prints what each buys.
"""
