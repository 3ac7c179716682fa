"""Issue 14: property-based fuzzing (hypothesis) of model configs, images, texts and numeric options.

Whatever is thrown at the CLI: never a traceback. Inputs invalid by construction: exit 2, exactly one line on
stderr, no output file. Runs in-process on tiny models (a few seconds in all).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._robust_models import SENTENCE, edited_copy, run_cli, save_text_model, save_vit_model, write_image
from attnviz.models.validate import LIMITS

FUZZ = settings(max_examples=25, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    return {"text": save_text_model(root / "text"), "vit": save_vit_model(root / "vit"),
            "image": write_image(root / "ok.png")}


def _assert_one_line_exit_2(code, out, err, output: Path):
    assert code == 2, (code, err)
    assert err.startswith("attnviz: error: ") and err.count("\n") == 1, err
    assert not output.exists()


def _assert_handled(code, err, output: Path):
    """Any outcome but a traceback: success with its file, or one line and exit 2 with none."""
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err.count("\n") == 1 and not output.exists(), err
    else:
        assert output.exists()
        assert all(line.startswith("attnviz: note: ") for line in err.splitlines()), err


# -- configs -----------------------------------------------------------------------------------------------
JSON_JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                     max_size=3), max_leaves=8)
INT_FIELDS = sorted(LIMITS)


def _invalid_int(field: str):
    low, high = LIMITS[field]
    return st.one_of(st.integers(max_value=low - 1), st.integers(min_value=high + 1),
                     st.text(min_size=1, max_size=6), st.none(), st.lists(st.integers(), max_size=2),
                     st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not float(x).is_integer()),
                     st.booleans())


@FUZZ
@given(data=st.data())
def test_invalid_config_fields_are_one_line_exit_2_no_output(models, capsys, data):
    field = data.draw(st.sampled_from([*INT_FIELDS, "mlp_ratio", "dropout", "attn_scale", "kind", "attn_bias"]))
    if field in LIMITS:
        value = data.draw(_invalid_int(field))
    elif field == "kind":
        value = data.draw(st.text(max_size=8).filter(lambda s: s not in ("encoder", "decoder", "encoder-decoder",
                                                                          "vit")))
    elif field == "attn_bias":
        value = data.draw(st.integers() | st.text(max_size=3) | st.none())
    else:
        value = data.draw(st.sampled_from([math.nan, math.inf, -math.inf, -1.0, 1e9, "x", None]))
    with tempfile.TemporaryDirectory() as tmp:
        bad = edited_copy(models["text"], Path(tmp) / "bad", lambda d: d["model"].update({field: value}))
        out = Path(tmp) / "t.npz"
        code, stdout, err = run_cli(capsys, "trace", "--model", bad, "--text", SENTENCE, "-o", out,
                                    "--device", "cpu")
        _assert_one_line_exit_2(code, stdout, err, out)


@FUZZ
@given(path=st.lists(st.sampled_from(["model", "tokenizer", "labels", "history", "vocab", "task", "format"]),
                     min_size=1, max_size=2), value=JSON_JUNK)
def test_random_config_mutations_never_end_in_a_traceback(models, capsys, path, value):
    def edit(doc):
        node = doc
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                return
        node[path[-1]] = value

    with tempfile.TemporaryDirectory() as tmp:
        bad = edited_copy(models["text"], Path(tmp) / "bad", edit)
        out = Path(tmp) / "t.npz"
        code, _, err = run_cli(capsys, "trace", "--model", bad, "--text", SENTENCE, "-o", out, "--device", "cpu")
        _assert_handled(code, err, out)


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_random_config_files_are_one_line_exit_2(models, capsys, raw):
    with tempfile.TemporaryDirectory() as tmp:
        bad = edited_copy(models["text"], Path(tmp) / "bad", lambda d: None)
        (bad / "config.json").write_bytes(raw)
        out = Path(tmp) / "t.npz"
        code, stdout, err = run_cli(capsys, "trace", "--model", bad, "--text", SENTENCE, "-o", out)
        _assert_one_line_exit_2(code, stdout, err, out)


@FUZZ
@given(cut=st.integers(min_value=0, max_value=2000), junk=st.binary(max_size=64))
def test_damaged_weights_are_one_line_exit_2(models, capsys, cut, junk):
    with tempfile.TemporaryDirectory() as tmp:
        bad = edited_copy(models["text"], Path(tmp) / "bad", lambda d: None)
        data = (bad / "model.safetensors").read_bytes()
        (bad / "model.safetensors").write_bytes(data[:cut] + junk)
        out = Path(tmp) / "t.npz"
        code, stdout, err = run_cli(capsys, "trace", "--model", bad, "--text", SENTENCE, "-o", out)
        _assert_one_line_exit_2(code, stdout, err, out)


# -- images ------------------------------------------------------------------------------------------------
@FUZZ
@given(raw=st.binary(max_size=2000))
def test_random_bytes_as_an_image_are_one_line_exit_2(models, capsys, raw):
    with tempfile.TemporaryDirectory() as tmp:
        img = Path(tmp) / "in.png"
        img.write_bytes(raw)
        out = Path(tmp) / "t.npz"
        code, stdout, err = run_cli(capsys, "trace", "--model", models["vit"], "--image", img, "-o", out)
        _assert_one_line_exit_2(code, stdout, err, out)


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.none() | st.integers(min_value=8))
def test_mutated_images_never_end_in_a_traceback(models, capsys, flips, cut):
    data = bytearray(models["image"].read_bytes())
    for pos, byte in flips:
        data[pos % len(data)] = byte
    with tempfile.TemporaryDirectory() as tmp:
        img = Path(tmp) / "in.png"
        img.write_bytes(bytes(data[:cut]))
        out = Path(tmp) / "t.npz"
        code, _, err = run_cli(capsys, "trace", "--model", models["vit"], "--image", img, "-o", out)
        _assert_handled(code, err, out)


# -- texts -------------------------------------------------------------------------------------------------
@FUZZ
@given(text=st.text(max_size=40))
def test_any_text_is_traced_or_refused_in_one_line(models, capsys, text):
    if "\x00" in text:  # a NUL cannot be passed on a real command line either
        text = text.replace("\x00", "")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t.npz"
        code, _, err = run_cli(capsys, "trace", "--model", models["text"], "--text", text, "-o", out, "--truncate")
        _assert_handled(code, err, out)
        if code == 0:
            unknown = [c for c in text.lower() if not c.isspace() and not c.isalnum() and c not in ".,'"]
            if unknown:  # characters outside the tiny vocabulary are named in the notice
                assert "read as [UNK]" in err


# -- numeric options ---------------------------------------------------------------------------------------
NUMERIC = {  # command, option, a valid value of the others
    "--dpi": ("export", st.one_of(st.integers(max_value=9), st.integers(min_value=2401))),
    "--scale": ("export", st.one_of(st.floats(max_value=0.2499), st.floats(min_value=8.0001),
                                    st.just(math.nan), st.just(math.inf))),
    "--font-scale": ("export", st.one_of(st.floats(max_value=0.0999), st.floats(min_value=10.001),
                                         st.just(math.nan))),
    "--size": ("export", st.one_of(st.text(max_size=6), st.tuples(st.integers(0, 15), st.integers(16, 100)).map(
        lambda t: f"{t[0]}x{t[1]}"), st.integers(16385, 10**7).map(lambda w: f"{w}x100"))),
    "--layer": ("export", st.integers(max_value=-1) | st.integers(min_value=10**6 + 1) | st.text(max_size=3)),
    "--head": ("steps", st.integers(max_value=-1) | st.just("1.5") | st.just("nan")),
    "--query": ("steps", st.integers(max_value=-1) | st.just("inf") | st.just("1e3")),
    "--lr": ("train", st.one_of(st.floats(max_value=0), st.floats(min_value=10.0001), st.just(math.nan))),
    "--batch-size": ("train", st.integers(max_value=0) | st.integers(min_value=65537) | st.just("1e9")),
    "--steps": ("train", st.integers(max_value=0) | st.just("ten") | st.just("1.5")),
    "--seed": ("train", st.integers(max_value=-1) | st.integers(min_value=2**32)),
    "--repeat": ("bench", st.integers(max_value=0) | st.integers(min_value=1001)),
}
BASE = {"export": ["--model", "coref", "--text", "x", "--view", "head-map", "-o", "{out}"],
        "steps": ["--model", "coref", "--text", "x"], "train": ["--task", "coref", "--out", "{out}"], "bench": []}


@FUZZ
@given(data=st.data())
def test_invalid_numeric_options_are_one_line_exit_2_before_anything_runs(capsys, data):
    option = data.draw(st.sampled_from(sorted(NUMERIC)))
    command, values = NUMERIC[option]
    value = data.draw(values)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ("x.png" if command == "export" else "m")
        argv = [command, *(a.format(out=out) for a in BASE[command]), f"{option}={value}"]
        code, stdout, err = run_cli(capsys, *argv)
        _assert_one_line_exit_2(code, stdout, err, out)
        assert option in err
