"""The GUI thread never freezes: longest event-loop gap (a 10 ms timer) while training and loading.

Model loading, model runs and training all happen in workers; the GUI thread only receives
results. The limit is the design's 100 ms.

Slack, and why: the machine these tests run on has 2 cores shared with other jobs. While one core
runs our worker, the GUI thread shares the other with those jobs, and the OS alone then keeps it
waiting for up to ~100 ms now and then, whatever the app does. So each test first measures a
*baseline* in that same situation but with nothing of ours that could stall: a niced thread
burning a core in C code (NumPy, no GIL held), and the GUI thread busy for 20 ms every 250 ms
(about what repainting the curves costs). The baseline's worst extra delay (beyond those 20 ms
and one timer period) is allowed on top of the 100 ms limit. Every test also requires 95 % of
the gaps under 50 ms. On a quiet machine the slack is about zero. Every figure is printed
(``pytest -s``).
"""

from __future__ import annotations

import threading

import numpy as np

from attnviz.bench.stall import StallMeter
from attnviz.gui.workers import lower_thread_priority

LIMIT_MS = 100.0
P95_MS = 50.0


BURST_MS = 20.0


def _idle(qtbot, seconds: float) -> float:
    """Baseline slack (ms): the worst gap beyond a 20 ms GUI burst while no worker runs."""
    import time

    from PySide6.QtCore import QTimer

    def burst():
        end = time.perf_counter() + BURST_MS / 1000
        while time.perf_counter() < end:
            pass

    stop = threading.Event()

    def busy_core():  # like a worker inside torch kernels: a core taken, the GIL mostly free
        lower_thread_priority()
        a = np.random.default_rng(0).standard_normal((256, 256))
        while not stop.is_set():
            a = np.tanh(a @ a.T / 256.0)

    worker = threading.Thread(target=busy_core, daemon=True)
    worker.start()
    timer = QTimer()
    timer.setInterval(250)
    timer.timeout.connect(burst)
    timer.start()
    with StallMeter() as meter:
        qtbot.wait(int(seconds * 1000))
    timer.stop()
    stop.set()
    worker.join()
    return max(0.0, meter.max_gap_ms - BURST_MS - meter.period_ms)


def _check(meter: StallMeter, slack: float, what: str) -> None:
    gaps = sorted(meter.gaps_ms)
    p95 = gaps[int(0.95 * (len(gaps) - 1))]
    print(f"\n{what}: longest event-loop gap {meter.max_gap_ms:.1f} ms, 95th percentile {p95:.1f} ms "
          f"over {meter.ticks} ticks; baseline slack {slack:.1f} ms")
    assert p95 < P95_MS
    assert meter.max_gap_ms < LIMIT_MS + slack


def _big_model(root):
    """A model heavy enough that loading it takes a noticeable time (~6 M parameters, ~25 MB), shaped like
    the bundled ones (2 layers × 4 heads): the all-heads grid of the model view is built on the GUI
    thread and grows with layers × heads, which is the views' cost, not loading's."""
    import torch

    from attnviz.models.checkpoint import save_checkpoint
    from attnviz.models.config import ModelConfig
    from attnviz.models.registry import build_model
    from attnviz.text.tokenizer import Tokenizer

    tok = Tokenizer.build("word", ["the cat sat on the mat and the dog barked"], prefix=["[CLS]"])
    cfg = ModelConfig(kind="encoder", vocab_size=len(tok.vocab), n_layers=2, n_heads=4, d_model=512, max_len=64)
    torch.manual_seed(0)
    return save_checkpoint(root / "big", build_model(cfg).eval(), cfg, {"task": "tiny-classify"}, tokenizer=tok)


def test_stall_meter_sees_a_blocked_loop(qapp, qtbot):
    import time

    with StallMeter() as meter:
        qtbot.wait(50)
        time.sleep(0.25)  # a deliberate freeze of the GUI thread
        qtbot.wait(50)
    assert meter.max_gap_ms >= 240 and meter.ticks >= 5


def _load_three_times(win, qtbot, big) -> StallMeter:
    with StallMeter() as meter:
        for ref in (str(big), "tiny-decoder", str(big)):
            with qtbot.waitSignal(win.trace_shown, timeout=60000):
                win.load_model(ref)
    assert win.loaded.path == big
    return meter


def test_no_stall_while_loading_and_running_models(make_window, qtbot, tmp_path):
    big = _big_model(tmp_path)
    win = make_window(start=False, model="tiny-encoder", text="the cat sat")
    with qtbot.waitSignal(win.trace_shown, timeout=60000):
        win.start()
    qtbot.waitUntil(lambda: win.training is not None, timeout=120000)  # every start-up import is done
    # What the views cost to redraw is theirs to keep small; this measures loading and running the
    # model, so the Attention tab is in the background (its views catch up when shown).
    win.tabs.setCurrentWidget(win.training_page)
    qtbot.wait(300)
    slack = _idle(qtbot, 2.0)
    meter = _load_three_times(win, qtbot, big)
    _check(meter, slack, "loading a 6 M-parameter model three times (views hidden)")
    win.tabs.setCurrentWidget(win.views_area)
    shown = _load_three_times(win, qtbot, big)
    print(f"loading (views on screen, for information): longest gap {shown.max_gap_ms:.1f} ms")


def test_no_stall_while_training(make_window, qtbot, tmp_path):
    win = make_window(model="tiny-encoder", text="the cat sat")
    qtbot.waitUntil(lambda: win.warm, timeout=180000)  # start-up's background imports are done
    panel = win.training
    panel.task_box.setCurrentText("coref")
    qtbot.waitUntil(lambda: panel._defaults.get("name") == "coref", timeout=60000)
    panel.steps_box.setValue(150)
    panel.batch_box.setValue(32)
    panel.out_edit.setText(str(tmp_path / "run"))
    win.tabs.setCurrentWidget(win.training_page)  # the live curves are on screen while it trains
    qtbot.wait(300)
    slack = _idle(qtbot, 2.0)
    with StallMeter() as meter:
        with qtbot.waitSignal(panel.finished, timeout=300000):
            panel.start()
    assert panel.steps[-1] == 150
    _check(meter, slack, "training coref for 150 steps (curves on screen)")
