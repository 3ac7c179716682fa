"""Issue 29, item 2: fuzzing the files lecturers share. Malformed JSON, deep nesting, format-string attacks and
oversized values, as scenes and as lessons: every one is read or refused with one line (exit 2 in the CLI),
never a traceback, and never costs more than a bounded amount of memory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.errors import InputError
from attnviz.lessons.caption import fill_caption
from attnviz.lessons.lesson import load_lesson
from attnviz.lessons.scene import load_scene

MEMORY_LIMIT = 2**30  # 1 GB for the whole CLI run; a few MB per file read in-process
SCENE = {"format": "attnviz-scene", "version": 1, "model": "no-such-model", "text": "the animal was tired",
         "view": "head-map", "title": "t"}
VALUES = {"here": 0.8, "held": 0.9, "n": 200, "query": "it", "target": "animal"}

_field = st.one_of(st.sampled_from(["here", "held", "n", "query", "nope", "", "0", "here.real", "query[0]",
                                    "query.__class__.__mro__", "here!r", "here!s"]),
                   st.text(max_size=12))
_spec = st.one_of(st.none(), st.sampled_from([".2f", ".0%", ".1%", ".0e", "g", "d", ",", ">8", "^12.3f", ".7f",
                                              ">41", ">2000000000", "%Y", "{n}", "x" * 50]),
                  st.from_regex(r"[<>^]?[0-9]{0,11}(\.[0-9]{1,3})?[a-z%]?", fullmatch=True))
_placeholder = st.builds(lambda f, s: "{" + f + ("" if s is None else ":" + s) + "}", _field, _spec)
captions = st.lists(st.one_of(_placeholder, st.text(max_size=20), st.sampled_from(["{", "}", "{{", "}}"])),
                    max_size=8).map("".join)
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
                       st.floats(allow_nan=True), st.text(max_size=30))
json_values = st.recursive(_json_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                          st.dictionaries(st.text(max_size=8), c, max_size=4)),
                           max_leaves=20)
_keys = st.sampled_from(["model", "text", "image", "view", "part", "layer", "head", "query", "step", "whatif",
                         "colormap", "theme", "title", "caption", "claim", "format", "version", "extra"])
oversized = st.sampled_from([("text", "w " * 30_000), ("title", "x" * 100_000), ("layer", 10**30),
                             ("query", 2**63), ("caption", "{n}" * 5000), ("whatif", {"ablate": [[0, 0]] * 5000}),
                             ("whatif", {"temperature": 1e308}), ("whatif", {"ablate": [[0, [1]]]}),
                             ("claim", {"kind": "attends-to", "target": "x" * 10_000})])
scene_docs = st.one_of(
    st.builds(lambda k, v: {**SCENE, k: v}, _keys, json_values),
    st.builds(lambda c: {**SCENE, "caption": c}, captions),
    st.builds(lambda kv: {**SCENE, kv[0]: kv[1]}, oversized),
    json_values,
)
raw_texts = st.one_of(
    st.builds(lambda d: json.dumps(d, allow_nan=True), scene_docs),
    st.builds(lambda d, cut: json.dumps(d)[:cut], scene_docs, st.integers(0, 200)),  # truncated
    st.builds(lambda n, o: o * n, st.integers(1, 200_000), st.sampled_from(["[", '{"a":', '{"format":['])),
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)


def _as_lesson(text: str) -> str:
    return '{"format": "attnviz-lesson", "version": 1, "scenes": [' + text + "]}"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=raw_texts, as_lesson=st.booleans())
def test_any_shared_file_is_read_or_refused_in_one_line_with_bounded_memory(tmp_path_factory, raw, as_lesson):
    path = tmp_path_factory.mktemp("fuzz") / "shared.json"
    path.write_text(_as_lesson(raw) if as_lesson else raw, encoding="utf-8", errors="surrogatepass")
    tracemalloc.start()
    try:
        try:
            scenes = load_lesson(path).scenes if as_lesson else [load_scene(path)]
            for scene in scenes:
                fill_caption(scene.caption, VALUES)
        except InputError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak  # the file's text, parsed: never the caption's asked-for width


_CHILD = textwrap.dedent("""
    import contextlib, io, json, os, sys
    sys.path.insert(0, sys.argv[2])
    from hypothesis import HealthCheck, given, settings
    from test_fuzz_shared_files import _as_lesson, raw_texts
    from attnviz.cli import main
    from attnviz.lessons.lesson import load_lesson
    from attnviz.lessons.scene import load_scene

    results = []

    @settings(max_examples=int(sys.argv[3]), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(raw=raw_texts)
    def run(raw):
        for i, (text, argv) in enumerate([(raw, ["export", "--scene", "{f}", "-o", "{d}/x.png"]),
                                           (_as_lesson(raw), ["export", "--lesson", "{f}", "-o", "{d}/deck.pdf"]),
                                           (_as_lesson(raw), ["lesson", "check", "{f}", "--n", "1"])]):
            f = os.path.join(sys.argv[1], "shared.json")
            with open(f, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
            try:
                (load_scene if argv[1] == "--scene" else load_lesson)(f)
                loads = True
            except Exception:
                loads = False
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    code = main([a.format(f=f, d=sys.argv[1]) for a in argv])
                except SystemExit as exc:
                    code = exc.code
                except BaseException as exc:  # a traceback would have ended the CLI here
                    code = "raised " + type(exc).__name__ + ": " + str(exc)[:200]
            results.append([argv[1], loads, code, err.getvalue()[-500:]])

    run()
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    print(json.dumps({"results": results, "hwm_kb": hwm}))
""")


def test_the_cli_refuses_fuzzed_scenes_and_lessons_in_one_line_under_1_gb(tmp_path):
    """Every generated file through `export --scene`, `export --lesson` and `lesson check` in one child process
    whose peak memory is measured (VmHWM): exit 2, one line, no traceback."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), str(__import__("pathlib").Path(__file__)
                           .parent), "60"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(report["results"]) >= 60
    for command, loads, code, err in report["results"]:
        assert "Traceback" not in err and not str(code).startswith("raised"), (command, code, err)
        if not loads:  # a file the loader refuses: one line, exit 2, before any model or Qt
            assert code == 2 and err.count("\n") == 1 and err.startswith("attnviz: error:"), (command, code, err)
        else:  # a well-formed file naming no real model: measured or refused, never a crash
            assert code in (0, 1, 2), (command, code, err)
    print(f"peak memory of the CLI over {len(report['results'])} fuzzed files: {report['hwm_kb'] / 1024:.0f} MB")
    assert report["hwm_kb"] * 1024 < MEMORY_LIMIT
