"""How the app starts: what runs on which thread before the first attention map, and why.

Goals (``attnviz bench --only gui`` and ``--only startup`` print them; no test asserts a time): the first
attention map within 1.0 s of launch on two cores, and the window never frozen for more than 100 ms on the way
to it or to the live model's map. The obstacle: before the first map PySide6, pyqtgraph and the views must
be imported and the window built, most of it on the GUI thread, and torch's import (hundreds of MB of native
libraries) competes for the same interpreter lock. Everything below serves one of two aims: *do less before the
first map*, or *cut what must be done into event-loop turns short enough not to freeze the window*.

Timeline (threads: **GUI**, **views lane** = a torch-free worker, **model lane** = the worker that owns torch
and the model; :mod:`attnviz.gui.workers`)

1. GUI: PySide6, the QApplication and the main window of plain Qt widgets; the first paint.
2. GUI, ``MainWindow.start()`` after that paint (:mod:`attnviz.gui.window.startup_steps`): the views lane imports
   numpy and pyqtgraph's other Qt-free dependencies, makes pyqtgraph's import plan, imports the views' Qt-free
   dependencies (``attnviz.capture``, ``analysis``, ``runtime``), reads the bundled model's stored opening trace
   and makes the views' import plan (:mod:`.import_plans`). A plan lists a package's modules leaves first and
   splits its ``__init__`` into statements (:mod:`.stepped_import`); it is read from the user's cache when the
   sources are unchanged (``plan_cache``, :mod:`.plan_cache`). The GUI thread meanwhile runs a generator, one
   item per event-loop turn: PySide6's lazily built types created a few dozen per turn (``qt_warm_up``:
   pyqtgraph's import copies every name of QtCore/QtGui/QtWidgets, which creates them all) → pyqtgraph, then
   the views, one plan step per turn (``stepped_import``) → every view docked, those on screen built half a
   view per turn, the colour maps' tables read → the stored opening trace drawn: **the first map**.
3. model lane, a frame after the first map: torch's native libraries are ``dlopen``-ed through ctypes, which
   releases the interpreter lock (``native_preload``, :mod:`.native_preload`), then ``import torch`` and the
   model; its own run of the same sentence replaces the stored trace with the same numbers: **the live map**.
4. After the live map: the Training and Walkthrough pages (their imports on a worker, their Qt modules and
   widgets stepped on the GUI thread: ``window/pages.py``), the views not on screen in idle turns,
   torch's rarely used modules on the model lane.

What each mechanism buys is measured, not written here: ``attnviz bench --only startup --repeat 5`` launches
the app in interleaved pairs, all on and one mechanism off, and prints the median gain and its range on the
mechanism's goal figure (the last figures are in ``docs/PERFORMANCE.md``). A mechanism stays only while that
median is at least 50 ms on its goal figure (issue 39); the launch-time prefetch thread and the collector held
until the first map were removed on that rule.

Rules that are not trade-offs (never switch these off)

- Modules that define or use Qt classes (pyqtgraph, ``attnviz.gui.*``) are imported on the GUI thread only:
  PySide6 creates types and enums lazily, and a worker doing so while the GUI thread uses Qt is a race.
- torch is not imported until pyqtgraph and the views are: importing torch on a worker during pyqtgraph's
  stepped import crashed PySide6 6.11 (a segfault in its attribute lookup while painting, 4-6 of 6 runs;
  0 of 8 with torch held back; ``tests/gui/test_startup_order.py`` fails on the old order).
- Nothing replaces another library's functions or import machinery unless a benchmark row shows it buys
  100 ms or more of first map or stall (issue 31). A replaced PySide6 import check and pyqtgraph's lazily
  filled Qt mirrors were removed on that rule: over 5 launch pairs they bought nothing measurable, and a
  PySide6 or pyqtgraph release could break them at start-up, where a user can do nothing. The one exception
  is the stepped import's temporary module ``__getattr__`` on the half-built package (it finishes the import
  if anything asks for a name early, and is removed at the end), which the start-up benchmark shows is worth
  its stall (``stepped_import``'s row). Its steps are ordinary ``importlib.import_module`` calls and the
  package's own statements, so a wrong plan only makes one step longer, never the result different.

Switches: each mechanism (:data:`.switches.MECHANISMS`) is switched off by ``ATTNVIZ_STARTUP_<NAME>=0`` (:mod:`.switches`), and
``attnviz bench --only startup --repeat N`` launches the app in N pairs per mechanism, all on and that one
off back to back, and prints what each buys beside the machine's load.
"""
