"""Pieces of the scripts GUI tests run in a fresh process (as the app runs: inside the test session's
QApplication Qt reuses widgets and some leaks and layouts do not show).

``PREAMBLE``: the application, ``MainWindow`` and ``wait_for_workers`` imported, ``pump(seconds)`` to run its
events. ``STARTED``: after ``win = MainWindow(...)`` is made and shown: start it, wait for the first trace and
its views, let the workers finish; ``area`` is the views area."""

PREAMBLE = """
import json, sys, time
from attnviz.gui.app import create_application
from attnviz.gui.window.main_window import MainWindow
from attnviz.gui.workers import wait_for_workers
app = create_application()
def pump(s):
    end = time.time() + s
    while time.time() < end:
        app.processEvents()
        time.sleep(0.02)
"""

STARTED = """
win.start()
while win.trace is None or not win.views_area.views:
    pump(0.1)
wait_for_workers(60000)
pump(0.5)
area = win.views_area
"""
