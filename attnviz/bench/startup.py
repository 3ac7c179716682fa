"""Start-up figures: a fresh process launched exactly like ``attnviz`` (the clock starts before the interpreter
does), timed to its first paint, its first attention map, the live model's map and the settled window, with
the event loop's longest stall in each stretch. Used by :mod:`attnviz.bench.gui`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from attnviz.bench.screen import use_headless_screen

__all__ = ["measure_startup"]


# The child runs the real CLI path, in its own import order; it only adds listeners (when the CLI imports
# the window's module) that report when things reach the screen, and a stall meter from the first paint
# until start-up has settled (the start-up's worst freezes).
_CHILD = r"""
import json, os, sys, time
T0 = float(os.environ["ATTNVIZ_BENCH_T0"])
marks = {}
def mark(name):
    marks.setdefault(name, time.time() - T0)
import importlib.abc, importlib.util
def patch(mw):
  from attnviz.bench.stall import StallMeter
  _init = mw.MainWindow.__init__
  def _patched(self, *a, **k):
      _init(self, *a, **k)
      from PySide6.QtCore import QTimer
      from PySide6.QtWidgets import QApplication
      meter = StallMeter(sample_stacks=os.environ.get("ATTNVIZ_BENCH_STACKS") == "1")
      def painted():
          mark("first_window_s")
          meter.__enter__()
      def shown(_trace=None):
          if self.trace is not None and self.views_area.views and "first_attention_s" not in marks:
              self.views_area.repaint()  # synchronous: the map is drawn when this returns
              mark("first_attention_s")
              marks["first_attention_cpu_s"] = time.process_time()  # all threads: steadier on a shared machine
              marks["startup_max_stall_ms"] = max(meter.gaps_ms + [meter._clock.nsecsElapsed() / 1e6])
              marks["startup_max_stall_cpu_ms"] = max(meter.cpu_gaps_ms + [meter.open_cpu_gap_ms()])
          if (self.trace is not None and self.loaded is not None and "first_attention_s" in marks
                  and "live_attention_s" not in marks):
              # the live model's own map (the first one may be the stored opening trace)
              self.views_area.repaint()
              mark("live_attention_s")
              marks["startup_to_live_max_stall_ms"] = max(meter.gaps_ms + [meter._clock.nsecsElapsed() / 1e6])
              marks["startup_to_live_max_stall_cpu_ms"] = max(meter.cpu_gaps_ms + [meter.open_cpu_gap_ms()])
              settled()
      def settled():
          # start-up ends when its background imports are done and every view is built (idle building):
          # work moved after the live map still counts
          # (a view that cannot be built stays a placeholder for ever: 30 s after the live map is enough)
          if not (self.warm and not self.views_area.unbuilt()) and time.time() - T0 < marks["live_attention_s"] + 30:
              QTimer.singleShot(50, settled)
              return
          mark("settled_s")
          meter.__exit__()
          marks["startup_to_settled_max_stall_ms"] = meter.max_gap_ms
          marks["startup_to_settled_max_stall_cpu_ms"] = meter.max_cpu_gap_ms
          if meter.sampler is not None:
              marks["stalls"] = meter.sampler.report()
          print("ATTNVIZ_BENCH " + json.dumps(marks), flush=True)
          QApplication.instance().quit()
      self.first_painted.connect(painted)
      self.model_loaded.connect(lambda _ref: mark("model_loaded_s"))
      self.trace_shown.connect(lambda _t: mark("first_trace_s"))
      self.views_ready.connect(lambda: mark("views_ready_s"))
      self.trace_shown.connect(shown)
      self.views_ready.connect(shown)
  mw.MainWindow.__init__ = _patched
class _PatchOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # the window's module is patched when the CLI first imports it, so the launch runs in its own order
    def find_spec(self, name, path, target=None):
        if name != "attnviz.gui.window.main_window":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        self.loader, spec.loader = spec.loader, self
        return spec
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        self.loader.exec_module(module)
        patch(module)
sys.meta_path.insert(0, _PatchOnImport())
from attnviz.cli import main
sys.exit(main(sys.argv[1:]))
"""


def measure_startup(model: str | None = None, timeout: float = 120.0, settings_path: str | None = None,
                    stacks: bool = False, cache_dir: str | None = None, extra_env: dict | None = None) -> dict:
    """Launch the app in a new process and time its first paint and its first attention map.

    Parameters
    ----------
    model : bundled model name or directory (default: what the app opens by itself).
    settings_path : settings file for the child (default: a fresh temporary one, i.e. a first launch).
    stacks : also sample the GUI thread's stack during its longest freezes (``stalls`` in the result:
        see :class:`attnviz.bench.stall.StackSampler`).
    cache_dir : the child's cache folder (``ATTNVIZ_CACHE_DIR``; default: the user's, as a launch would).
    extra_env : further environment variables for the child (e.g. a start-up mechanism switched off:
        :mod:`attnviz.gui.startup.switches`).

    Returns
    -------
    dict with ``first_window_s``, ``first_attention_s`` (the first map, perhaps the stored opening trace)
    and ``live_attention_s`` (the live model's map), in seconds from process launch; the longest
    event-loop stall until the first map (``startup_max_stall_ms``), until the live map
    (``startup_to_live_max_stall_ms``) and until start-up has settled, i.e. its background imports are
    over and every view is built (``settled_s``, ``startup_to_settled_max_stall_ms``); each stall also as
    the GUI thread's CPU time in that gap (``*_stall_cpu_ms``: steadier on a shared machine);
    ``first_attention_cpu_s``, the CPU time of all threads by the first map.
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["ATTNVIZ_SETTINGS"] = settings_path or os.path.join(tmp, "settings.ini")
        use_headless_screen(env)  # a headless machine: measured off screen (a desktop-sized one), not refused
        env["ATTNVIZ_BENCH_STACKS"] = "1" if stacks else ""
        if cache_dir is not None:
            env["ATTNVIZ_CACHE_DIR"] = cache_dir
        env.update(extra_env or {})
        env["ATTNVIZ_BENCH_T0"] = repr(time.time())
        args = [sys.executable, "-c", _CHILD, "gui"] + (["--model", model] if model else [])
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("ATTNVIZ_BENCH "):
            return json.loads(line.split(" ", 1)[1])
    tail = (proc.stderr or proc.stdout)[-400:]
    raise RuntimeError(f"the app did not report its start-up (exit {proc.returncode}): {tail}")
