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
    p.add_argument("--long-T", default="", metavar="LENGTHS",
                   help="section long: also capture these lengths at full depth, float32 and float16 weights, each in a "
                        "fresh process (peak memory over the weights, time against the SDPA forward), e.g. 8192,16384;"
                        " minutes each, so none by default")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.errors import AttnvizError

    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        raise AttnvizError(f"unknown bench section {unknown[0]!r}: choose from {', '.join(SECTIONS)}")
    long_T = _lengths(args.long_T)
    results: dict[str, dict] = {}
    for section in wanted:
        runner = _SECTION_RUNNERS[section]
        got = runner(args.repeat, long_T) if section == "long" else runner(args.repeat)
        results[section] = _collect_section(section, got, show=not args.json)
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


def _lengths(text: str) -> tuple[int, ...]:
    from attnviz.errors import AttnvizError

    try:
        lengths = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise AttnvizError(f"--long-T takes comma-separated token counts, e.g. 8192,16384 (got {text!r})") from None
    if any(not 2 <= n <= 1_048_576 for n in lengths):
        raise AttnvizError(f"--long-T lengths must be 2..1,048,576 tokens (got {text!r})")
    return lengths


def _collect_section(name: str, got, show: bool) -> dict:
    """A section's figures: a dict, or groups of them as each is measured (printed at once, so a section that
    runs for many minutes shows its rows as it goes)."""
    if show:
        print(f"[{name}]", flush=True)
    figures: dict = {}
    for group in ([got] if isinstance(got, dict) else got):
        figures.update(group)
        if show:
            _print_rows(group)
    return figures


def _print_rows(figures: dict) -> None:
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


def _hf(repeat: int):
    from attnviz.bench.hf import measure_hf_overhead
    from attnviz.bench.hf_decoder import measure_decoder_capture
    from attnviz.bench.hf_encdec import measure_encdec_capture

    yield measure_hf_overhead()
    yield measure_decoder_capture()
    yield measure_encdec_capture()


def _longmap(repeat: int) -> dict:
    from attnviz.bench.longmap import measure_long_map

    return measure_long_map()


def _long(repeat: int, long_T: tuple[int, ...] = ()):
    # the capture's rows (wall, CPU, memory against the SDPA forward), the head map of a 16,384-token input asked
    # for in blocks (tile latency, pan fps, overview fill), the 3,000-token HTML page, T5 and BART: each group
    # printed as soon as it is measured
    from attnviz.bench.encdec_long import measure_encdec_long
    from attnviz.bench.html import measure_long_html_on_demand
    from attnviz.bench.long_capture import iter_long_capture
    from attnviz.bench.long_views import measure_long_views

    yield from iter_long_capture(min(repeat, 3), long_T=long_T or 0)
    yield {f"head map: {k}": v for k, v in measure_long_views().items()}  # its T and goal are its own
    for dtype in ("float32", "float16"):
        yield {f"html page, {dtype} weights: {k}": v for k, v in measure_long_html_on_demand(dtype=dtype).items()}
    yield measure_encdec_long(min(repeat, 3))


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
