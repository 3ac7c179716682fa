"""``attnviz bench``: print the performance figures the issues ask for, measured in one run."""

from __future__ import annotations

import json
import sys

SECTIONS = ("capture", "memory", "training", "views", "gui", "startup", "export", "export-gui", "hf", "longmap",
            "heads", "lesson", "decode", "html", "long")


def add_parser(sub) -> None:
    from attnviz.commands.common import HELP_FORMATTER, examples, int_range

    p = sub.add_parser(
        "bench", help="measure capture overhead, trace memory, training and GUI speed",
        description="Print the performance figures attnviz is held to, measured on this machine in one run "
                    "(medians of --repeat repetitions).",
        epilog=examples("attnviz bench", "attnviz bench --only capture,memory,training,views,gui,hf",
                        "attnviz bench --only export --repeat 3 --json > bench.json"),
        formatter_class=HELP_FORMATTER)
    p.add_argument("--only", default="capture,memory,training",
                   help=f"comma-separated sections: {', '.join(SECTIONS)} (default: capture,memory,training)")
    p.add_argument("--repeat", type=int_range(1, 1000), default=5,
                   help="timed repetitions per figure, 1..1000 (median reported; default 5); for gui and startup: app "
                        "launches (startup: per configuration)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.errors import AttnvizError

    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        raise AttnvizError(f"unknown bench section {unknown[0]!r}: choose from {', '.join(SECTIONS)}")
    results: dict[str, dict] = {}
    for section in wanted:
        results[section] = _SECTION_RUNNERS[section](args.repeat)
        if not args.json:
            _print_section(section, results[section])
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


def _print_section(name: str, figures: dict) -> None:
    print(f"[{name}]")
    for key, value in figures.items():
        print(f"  {key:<48} {value:.4g}" if isinstance(value, float) else f"  {key:<48} {value}")
    sys.stdout.flush()


def _capture(repeat: int) -> dict:
    from attnviz.bench.capture import measure_capture_overhead

    return measure_capture_overhead(repeat)


def _memory(repeat: int) -> dict:
    from attnviz.bench.capture import measure_trace_memory

    return measure_trace_memory()


def _training(repeat: int) -> dict:
    from attnviz.bench.training import measure_loop_overhead

    return measure_loop_overhead(repeats=max(1, min(repeat, 3)))


def _views(repeat: int) -> dict:
    import io
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from attnviz.bench.views import benchmark_head_switch, benchmark_model_grid

    sink = io.StringIO()  # the functions narrate; the figures are returned and printed here
    out: dict = {}
    for T, figs in benchmark_head_switch(out=sink).items():
        for k, v in figs.items():
            out[f"head switch T={T} {k} ms"] = v
    out["head switch goal"] = "<= 16 ms up to T=2048, <= 30 ms at 4096"
    for k, v in benchmark_model_grid(out=sink).items():
        out[f"12x12 grid T=128 {k}"] = v
    out["grid goal"] = "<= 50 ms"
    return out


def _gui(repeat: int) -> dict:
    from attnviz.bench.gui import run_gui_benchmarks

    return run_gui_benchmarks(launches=repeat)  # --repeat launches for the start-up figures


def _startup(repeat: int) -> dict:
    from attnviz.bench.startup_switches import measure_startup_switches

    # --repeat launches per configuration: all mechanisms on, and each one off
    return measure_startup_switches(repeat, progress=lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True))


def _export(repeat: int) -> dict:
    from attnviz.bench.export import run_export_benchmarks

    return run_export_benchmarks()


def _export_gui(repeat: int) -> dict:
    from attnviz.bench.export_stall import measure_export_stalls

    return measure_export_stalls()


def _hf(repeat: int) -> dict:
    from attnviz.bench.hf import measure_hf_overhead
    from attnviz.bench.hf_decoder import measure_decoder_capture
    from attnviz.bench.hf_encdec import measure_encdec_capture

    return {**measure_hf_overhead(), **measure_decoder_capture(), **measure_encdec_capture()}


def _longmap(repeat: int) -> dict:
    from attnviz.bench.longmap import measure_long_map

    return measure_long_map()


def _long(repeat: int) -> dict:
    # the capture's rows (wall, CPU, memory against the SDPA forward) and the head map of a 16,384-token
    # input asked for in blocks (tile latency, pan fps, overview fill): one group
    from attnviz.bench.long_capture import measure_long_capture
    from attnviz.bench.long_views import measure_long_views

    from attnviz.bench.html import measure_long_html_on_demand

    views = {f"head map: {k}": v for k, v in measure_long_views().items()}  # its T and goal are its own
    html = {f"html page: {k}": v for k, v in measure_long_html_on_demand().items()}
    from attnviz.bench.encdec_long import measure_encdec_long  # T5 and BART against their SDPA forward

    return {**measure_long_capture(min(repeat, 3)), **views, **html, **measure_encdec_long(min(repeat, 3))}


def _heads(repeat: int) -> dict:
    import io

    from attnviz.bench.heads import bench_heads

    return bench_heads(out=io.StringIO())  # the figures are printed by _print_section


def _decode(repeat: int) -> dict:
    from attnviz.bench.decode import run_decode_benchmarks

    return run_decode_benchmarks(repeat)


def _html(repeat: int) -> dict:
    from attnviz.bench.html import measure_html

    return measure_html(min(repeat, 3))  # each repetition launches a browser


def _lesson(repeat: int) -> dict:
    from attnviz.bench.lesson import measure_lesson_check

    return measure_lesson_check()


_SECTION_RUNNERS = {"lesson": _lesson, "heads": _heads, "hf": _hf, "capture": _capture, "memory": _memory, "training": _training, "views": _views, "gui": _gui,
                    "startup": _startup,
                    "export": _export, "longmap": _longmap, "decode": _decode, "export-gui": _export_gui,
                    "html": _html, "long": _long}
