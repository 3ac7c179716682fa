"""``bench --only long`` runs end to end on a tiny decoder of the same family (figures printed, never asserted)."""

import pytest


def test_long_section_runs_and_names_its_rows():
    pytest.importorskip("transformers")
    from attnviz.bench.long_capture import measure_long_capture

    tiny = dict(num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=300)
    rows = measure_long_capture(1, lengths=(260,), mem_T=0, long_T=0, sizes=tiny)
    # the rows exist and are numbers; their values are machine figures, not checked
    for key in ("T=260: capture / SDPA forward (wall)", "T=260: capture / SDPA forward (CPU time)"):
        assert isinstance(rows[key], float)
    assert "SmolLM2-shaped" in rows["decoder"]
    assert " / " in rows["T=260: minor page faults SDPA forward / capture (median)"]  # printed beside the times


def test_memory_and_full_depth_rows_print_for_float32_and_float16_weights():
    pytest.importorskip("transformers")
    from attnviz.bench.long_capture import measure_long_capture

    tiny = dict(num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=300)
    rows = measure_long_capture(1, lengths=(), mem_T=300, long_T=(300,), sizes=tiny)
    assert isinstance(rows["T=300: capture peak over weights MiB"], float)
    assert isinstance(rows["T=300: added / kept"], float)
    assert " / " in rows["T=300: minor page faults SDPA forward / capture (fresh child, first call)"]
    free_row = "T=300: C allocator's free bytes grown during the run, SDPA forward / capture MiB"
    fwd_free, cap_free = rows[free_row].split(" / ")
    for got in (fwd_free, cap_free):  # a number of MiB (may be negative: a run can reuse what was free before)
        assert got == "n/a" or isinstance(float(got), float)
    for dtype in ("float32", "float16"):  # the same rows with the model's weights in half precision
        name = f"T=300 full depth, {dtype} weights"
        assert isinstance(rows[f"{name}: capture peak over weights MiB (goal <= 2048)"], float)
        assert rows[f"{name}: weights MiB"] > 0
        assert "/" in rows[f"{name}: capture wall s / CPU s"] and ";" in rows[f"{name}: capture / SDPA forward (wall; CPU)"]


def test_weight_views_are_counted_apart_from_what_the_capture_adds():
    pytest.importorskip("transformers")
    from attnviz.bench.long_capture import measure_long_capture

    tiny = dict(num_hidden_layers=1, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=300)
    rows = measure_long_capture(1, lengths=(), mem_T=300, long_T=0, sizes=tiny)
    kept, views = rows["T=300: trace keeps MiB (of which views of the model's weights)"].rstrip(")").split(" (")
    assert 0 < float(views) < float(kept)  # the trace holds the layer's weights as views, and more besides
    assert rows["T=300: added / kept beyond the weight views"] > rows["T=300: added / kept"]


def test_a_section_prints_each_group_before_measuring_the_next(monkeypatch, capsys):
    from types import SimpleNamespace

    from attnviz.commands import bench

    seen = []

    def slow_section(repeat, long_T=()):
        yield {"first row": 1.5}
        seen.append(capsys.readouterr().out)  # what the user saw while the next group was being measured
        yield {"second row": "two"}

    monkeypatch.setitem(bench._SECTION_RUNNERS, "long", slow_section)
    args = SimpleNamespace(only="long", repeat=1, long_T="", json=False)
    assert bench.run(args) == 0
    assert "[long]" in seen[0] and "first row" in seen[0] and "second row" not in seen[0]
    assert "second row" in capsys.readouterr().out
    # control: a section that returns one dict prints it whole, once
    monkeypatch.setitem(bench._SECTION_RUNNERS, "long", lambda repeat, long_T=(): {"only row": 2.0})
    bench.run(args)
    assert capsys.readouterr().out.count("only row") == 1


def test_long_lengths_are_checked(monkeypatch):
    from types import SimpleNamespace

    from attnviz.commands import bench
    from attnviz.errors import AttnvizError

    monkeypatch.setitem(bench._SECTION_RUNNERS, "long", lambda repeat, long_T=(): {"lengths": str(long_T)})
    for bad in ("8k", "1", "99999999"):
        with pytest.raises(AttnvizError, match="--long-T"):
            bench.run(SimpleNamespace(only="long", repeat=1, long_T=bad, json=True))
    assert bench.run(SimpleNamespace(only="long", repeat=1, long_T="8192,16384", json=True)) == 0
