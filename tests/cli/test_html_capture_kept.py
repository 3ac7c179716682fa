"""``attnviz export -o page.html`` on a Hugging Face decoder captures only what recomputes the probabilities
(q, k and each row's log-sum-exp per layer), the page's whole content: no walkthrough arrays (x, v, z, the
residual stream), which made a 3,000-token page on a 30-layer decoder peak at 2.1 GB for 12.6 MB of page.
The control: a .png export of the same input keeps them (its figure may be a walkthrough's)."""

from __future__ import annotations

import pytest

import attnviz.runtime as runtime
from attnviz.cli import main
from tests.hf.factories import TEXT, make_model


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(make_model("llama", tmp_path_factory.mktemp("hf") / "llama", layers=2, max_pos=64))


def _kept(monkeypatch, argv) -> set[str]:
    seen = []
    real = runtime.run_trace

    def spy(*args, **kwargs):
        trace = real(*args, **kwargs)
        seen.append(set(trace.arrays))
        return trace

    monkeypatch.setattr(runtime, "run_trace", spy)
    assert main(argv) == 0
    assert len(seen) == 1
    return seen[0]


def test_an_html_page_keeps_only_what_recomputes_probabilities(folder, tmp_path, monkeypatch):
    page = tmp_path / "map.html"
    kept = _kept(monkeypatch, ["export", "--model", folder, "--text", TEXT, "--view", "head-map", "-o", str(page)])
    assert page.stat().st_size > 0
    layer_arrays = {k for k in kept if k.startswith("L")}
    assert layer_arrays == {f"L{i}.{name}" for i in (0, 1) for name in ("q", "k", "lse")}


def test_a_picture_export_keeps_the_walkthrough_arrays(folder, tmp_path, monkeypatch):
    kept = _kept(monkeypatch, ["export", "--model", folder, "--text", TEXT, "--view", "head-map",
                               "-o", str(tmp_path / "map.png")])
    assert {k for k in kept if k.rsplit(".", 1)[-1] in ("x", "v", "z")}
