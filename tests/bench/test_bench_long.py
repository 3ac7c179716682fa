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
    for dtype in ("float32", "float16"):  # the same rows with the model's weights in half precision
        name = f"T=300 full depth, {dtype} weights"
        assert isinstance(rows[f"{name}: capture peak over weights MiB (goal <= 2048)"], float)
        assert rows[f"{name}: weights MiB"] > 0
        assert "/" in rows[f"{name}: capture wall s / CPU s"] and ";" in rows[f"{name}: capture / SDPA forward (wall; CPU)"]
