"""A float16 / bfloat16 checkpoint runs in its own dtype (not silently float32): the probabilities equal the
model's own computation in that dtype, and dtype="float32" asks for float32."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from attnviz.hf.capture import capture_hf
from attnviz.hf.loader import load_hf_model

from .factories import hf, make_model, save_quietly


@pytest.fixture(scope="module")
def half_folder(tmp_path_factory):
    tf = hf()
    root = tmp_path_factory.mktemp("dtype")
    src = make_model("llama", root / "f32")
    model = tf.LlamaForCausalLM.from_pretrained(str(src), dtype=torch.float16)
    dst = root / "f16"
    save_quietly(model, dst)
    for f in src.iterdir():
        if not (dst / f.name).exists():
            shutil.copy(f, dst / f.name)
    return dst


@pytest.mark.parametrize("attention", ["eager", "on_demand"])
def test_float16_checkpoint_runs_in_float16(half_folder, attention):
    loaded = load_hf_model(half_folder, device="cpu")
    model = loaded.model
    assert next(model.parameters()).dtype == torch.float16 and loaded.info["dtype"] == "float16"
    ids = torch.tensor([[3, 7, 11, 5, 9, 2, 8]])
    tokens = [str(i) for i in range(ids.shape[1])]
    trace = capture_hf(model, {"input_ids": ids}, tokens, attention=attention)
    assert trace["L0.z"].dtype == np.float16  # arrays keep the dtype computed in
    model.set_attn_implementation("eager")
    with torch.no_grad():
        own = model(input_ids=ids, output_attentions=True).attentions  # the model's own float16 computation
        as32 = load_hf_model(half_folder, device="cpu", dtype="float32").model
        assert next(as32.parameters()).dtype == torch.float32
        as32.set_attn_implementation("eager")
        f32 = as32(input_ids=ids, output_attentions=True).attentions
    tol = 0.0 if attention == "eager" else 1e-3  # recomputed from float16 q, k: within float16 rounding
    for i in range(trace.n_layers):
        np.testing.assert_allclose(trace.probs(i), own[i][0].float().numpy(), rtol=0, atol=tol)
    # negative control: a float32 run of the same checkpoint is measurably another computation
    assert max(float(np.abs(trace.probs(i) - f32[i][0].numpy()).max()) for i in range(trace.n_layers)) > 0


def test_unknown_dtype_is_one_line(half_folder):
    from attnviz.errors import AttnvizError

    with pytest.raises(AttnvizError, match="unknown dtype"):
        load_hf_model(half_folder, device="cpu", dtype="float8")


def test_the_dtype_it_runs_in_is_said(half_folder, monkeypatch):
    """``describe()`` and the CLI's line name the dtype the weights run in; a float32 run of the same checkpoint
    says float32 (the control: the word comes from the parameters, not from the checkpoint's config)."""
    import attnviz
    from attnviz.cli import main

    assert attnviz.load(str(half_folder)).describe()["dtype"] == "float16"
    assert attnviz.load(str(half_folder), dtype="float32").describe()["dtype"] == "float32"
    out = half_folder.parent / "t.npz"
    lines = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    assert main(["trace", "--model", str(half_folder), "--text", "3 7 11", "-o", str(out)]) == 0
    assert any("run in float16" in line for line in lines), lines


def test_the_model_panel_says_the_dtype_and_escapes_the_name(half_folder, qtbot):
    from attnviz.gui.panels.model_panel import ModelPanel
    from attnviz.hf.loader import load_hf_model

    panel = ModelPanel()
    qtbot.addWidget(panel)
    loaded = load_hf_model(half_folder, device="cpu")
    loaded.info["name"] = "<i>x</i>"  # a folder's name is the user's text
    panel.show_loaded(loaded)
    assert "parameters in float16" in panel.details.text() and "&lt;i&gt;" in panel.details.text()
    panel.show_loaded(load_hf_model(half_folder, device="cpu", dtype="float32"))
    assert "parameters in float32" in panel.details.text()


def test_gui_takes_dtype_like_the_other_commands(half_folder, capsys):
    """``attnviz gui --dtype`` is parsed by the same helper as ``trace``/``export``, and the app's model load
    runs in it; without it the checkpoint's own float16 (the control)."""
    from attnviz.cli import build_parser
    from attnviz.gui.panels.model_jobs import load_model_job

    parser = build_parser()
    for cmd in ("gui", "trace"):
        extra = [] if cmd == "gui" else ["--model", "x", "--text", "y", "-o", "t.npz"]
        assert parser.parse_args([cmd, *extra, "--dtype", "bfloat16"]).dtype == "bfloat16"
        assert parser.parse_args([cmd, *extra]).dtype == "auto"
        with pytest.raises(SystemExit) as exc:
            parser.parse_args([cmd, *extra, "--dtype", "float8"])
        assert exc.value.code == 2
    capsys.readouterr()
    assert load_model_job(str(half_folder), "cpu", "float32").loaded.dtype == "float32"
    assert load_model_job(str(half_folder), "cpu").loaded.dtype == "float16"


def test_the_window_loads_in_the_dtype_asked(half_folder, qtbot, tmp_path, monkeypatch):
    """The window hands its ``dtype`` to every model load it queues (a switch of model too)."""
    from attnviz.gui.settings import AppSettings
    from attnviz.gui.window.main_window import MainWindow

    monkeypatch.setenv("ATTNVIZ_SETTINGS", str(tmp_path / "s.ini"))
    asked = []
    win = MainWindow(AppSettings(), autostart=False, dtype="float32")
    qtbot.addWidget(win)
    monkeypatch.setattr(win.lane, "submit", lambda kind, fn, *a, **k: asked.append((kind, a)))
    win.load_model(str(half_folder))
    assert asked == [("load", (str(half_folder), win.model_panel.device, "float32"))]


def test_steps_says_a_float16_model_ran_in_float16(half_folder, capsys):
    """`attnviz steps` ended "max |difference| = 0.000418" on a float16 model without saying why it is not ~1e-7;
    the control: the same checkpoint run in float32 says nothing of the kind."""
    from attnviz.cli import main

    assert main(["steps", "--model", str(half_folder), "--text", "3 7 11 5"]) == 0
    out = capsys.readouterr().out
    assert "run in float16" in out and "are float16 rounding" in out
    assert main(["steps", "--model", str(half_folder), "--text", "3 7 11 5", "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    assert "run in float" not in out and "rounding" not in out


def test_step_six_says_the_difference_is_float16_rounding(half_folder, tmp_path):
    from attnviz.cli import main
    from tests.gui.walkthrough_fixtures import svg_texts

    said = {}
    for dtype in ("auto", "float32"):  # float32: the control
        out = tmp_path / f"{dtype}.svg"
        assert main(["export", "--model", str(half_folder), "--text", "3 7 11 5", "--view", "steps", "--step", "6",
                     "--dtype", dtype, "-o", str(out)]) == 0
        said[dtype] = " ".join(svg_texts(out))
    assert "the model ran in float16, whose rounding is" in said["auto"]
    assert "the model ran in" not in said["float32"] and "differs by at most" in said["float32"]
