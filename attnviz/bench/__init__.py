"""Benchmarks behind ``attnviz bench``: every performance figure the issues ask for, printed, never asserted.

- :mod:`attnviz.bench.capture` — capture overhead against the fused forward; trace memory
- :mod:`attnviz.bench.training` — training-loop overhead against a bare PyTorch loop
- :mod:`attnviz.bench.views` — head switch and layers×heads grid redraw times
- :mod:`attnviz.bench.gui` — start-up, first map, event-loop stalls (a child process); keystroke latency
  per bundled model and for a random-weights BERT-base at T = 128
- :mod:`attnviz.bench.export` — figure and lecture-pack export times
- :mod:`attnviz.bench.export_stall` — event-loop stalls of the app's Export figure… and Copy figure
- :mod:`attnviz.bench.heads` — scoring every head over 1,000 inputs; memory for 10,000
- :mod:`attnviz.bench.lesson` — ``attnviz lesson check``: every claim of a lesson on 200 held-out inputs
- :mod:`attnviz.bench.hf` — Hugging Face capture overhead against the SDPA forward; the local BERT-base folder
- :mod:`attnviz.bench.longmap` — pan and zoom over a T = 16,384 map in the app's head map view (its pyramid)
- :mod:`attnviz.bench.decode` — greedy decoding with the key/value cache against the full re-run; the
  model's share of a keystroke (``run_trace``, no views) for reverse, translate and charlm
- :mod:`attnviz.bench.stall` — the event-loop freeze meter
- :mod:`attnviz.bench.traces` — traces made without files (tiny seeded models, synthetic attention)

Tests may import these to check the measuring code runs; no test asserts a figure.
"""
