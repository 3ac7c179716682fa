"""A trace's description is read through ``trace.description`` (typed, checked), never as a dict, outside the
capture code that builds and stores it (attnviz/capture/): a new ``trace.meta["…"]``, ``trace.meta.get(…)`` or
``"…" in trace.meta`` elsewhere fails here, with a control that the scan sees each form."""

from __future__ import annotations

import re
from pathlib import Path

import attnviz

PACKAGE = Path(attnviz.__file__).parent
# receivers whose ``.meta`` is not a trace's: a head-score result's summary (analysis/head_scores.py), an HTML
# page's data and figure (export/html_*.py, api/html_figure.py), a text input before its capture (runtime/native.py)
NOT_A_TRACE = {"result", "self.result", "data", "read"}
NOT_A_TRACE_FILES = {"api/html_figure.py"}  # HtmlFigure.meta: the page's own facts
_READ = re.compile(r"([A-Za-z_][\w.]*)\.meta(?:\.get\(|\[[^\]]*\](?!\s*=(?!=))|\b)")
_IN = re.compile(r"\bin\s+([A-Za-z_][\w.]*)\.meta\b(?!\.)")


def meta_reads(source: str) -> list[tuple[int, str]]:
    """(line, text) of each dict read of some object's ``.meta`` in ``source`` (assignments to a key are not reads;
    passing ``x.meta`` to a function that writes the capture's notice is not either)."""
    found = []
    for n, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if '"""' in code or "``" in code:
            continue  # docstrings name meta keys as documentation
        receivers = [m.group(1) for m in _READ.finditer(code) if re.search(r"\.meta(\.get\(|\[)", m.group(0))]
        receivers += [m.group(1) for m in _IN.finditer(code)]
        if any(r not in NOT_A_TRACE for r in receivers):
            found.append((n, line.strip()))
    return found


def test_the_scan_sees_every_form_of_read():
    """The control: each read form is found, an assignment to a key and another object's meta are not."""
    assert [n for n, _ in meta_reads('a = trace.meta.get("notice")\n'
                                     'b = self.trace.meta["model_name"]\n'
                                     'trace.meta["notice"] = "set"\n'
                                     'trace.meta["notice"] += "appended"\n'
                                     'if "compare" in t.meta:\n'
                                     'n = result.meta.get("n_repeated")\n'
                                     'c = trace.description.notice\n')] == [1, 2, 4, 5]


def test_no_dict_read_of_a_trace_meta_outside_the_capture_code():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("capture/") or rel in NOT_A_TRACE_FILES:
            continue
        found += [f"{rel}:{n}: {text}" for n, text in meta_reads(path.read_text(encoding="utf-8"))]
    assert found == [], "read these through trace.description (attnviz/capture/description.py):\n" + "\n".join(found)
