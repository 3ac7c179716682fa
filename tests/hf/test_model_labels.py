"""Labels true to the model (issue 36, finding 8): RMSNorm and SiLU for a Llama-family model, LN and GELU
for the models that have them, in the trace's meta and in the matrix-form figure."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from attnviz.analysis.model_labels import activation_label, norm_label
from attnviz.hf.describe import activation_of, norm_type_of, true_config


def test_the_config_names_the_norm_and_the_activation():
    llama = SimpleNamespace(model_type="llama", rms_norm_eps=1e-6, hidden_act="silu")
    bert = SimpleNamespace(model_type="bert", layer_norm_eps=1e-12, hidden_act="gelu")
    gpt2 = SimpleNamespace(model_type="gpt2", layer_norm_epsilon=1e-5, activation_function="gelu_new")
    t5 = SimpleNamespace(model_type="t5", layer_norm_epsilon=1e-6, dense_act_fn="relu")
    assert (norm_type_of(llama), activation_of(llama)) == ("rmsnorm", "silu")
    assert (norm_type_of(bert), activation_of(bert)) == ("layernorm", "gelu")  # negative control
    assert (norm_type_of(gpt2), activation_of(gpt2)) == ("layernorm", "gelu_new")
    assert norm_type_of(t5) == "rmsnorm"  # T5's "LayerNorm" subtracts no mean
    assert norm_label({"config": {"norm_type": "rmsnorm"}}) == "RMSNorm"
    assert norm_label({"config": {"norm": "pre"}}) == "LN"  # a native attnviz model: LayerNorm
    assert activation_label({"config": {"activation": "silu"}}) == "SiLU"


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.hf.factories import make_model

    return make_model("llama", tmp_path_factory.mktemp("llama"), seed=3)


def test_a_llama_trace_says_silu_and_rmsnorm(llama_folder):
    from attnviz.runtime import load_model, run_trace
    from tests.hf.factories import TEXT

    t = run_trace(load_model(str(llama_folder), device="cpu"), text=TEXT)
    assert t.meta["config"]["activation"] == "silu" and t.meta["config"]["norm_type"] == "rmsnorm"
    assert norm_label(t.meta) == norm_label(t.description) == "RMSNorm"
    assert true_config(SimpleNamespace(hidden_act="silu", rms_norm_eps=1e-6), load_model(str(llama_folder)).config)[
        "norm_type"] == "rmsnorm"


@pytest.mark.parametrize("model, want, not_want", [("llama", "RMSNorm(R)", "LN(R)"), ("coref", "LN(R)", "RMSNorm")])
def test_the_matrix_form_writes_the_models_norm(model, want, not_want, llama_folder, tmp_path):
    from pathlib import Path

    from attnviz.cli import main
    from tests.gui.walkthrough_fixtures import svg_texts
    from tests.hf.factories import TEXT

    ref = str(llama_folder) if model == "llama" else model
    if model == "coref" and not (Path(__file__).resolve().parents[2] / "assets/models/coref/config.json").exists():
        pytest.skip("the bundled coref model is not built")
    out = tmp_path / "m.svg"
    args = ["export", "--model", ref, "--view", "matrix-form", "-o", str(out), "--size", "1600x900"]
    assert main(args + (["--text", TEXT] if model == "llama" else [])) == 0
    text = " ".join(svg_texts(out))
    assert want in text and not_want not in text


@pytest.mark.parametrize("family, want, not_want", [
    ("bert", "the residual stream itself, in a post-LN model", "pre-LN"),  # BERT normalises after each addition
    ("llama", "RMSNorm of the residual stream in a pre-RMSNorm model", "post-"),
])
def test_step_one_says_what_x_is_for_the_models_norm_placement(family, want, not_want, tmp_path):
    pytest.importorskip("transformers")
    from attnviz.cli import main
    from tests.gui.walkthrough_fixtures import svg_texts
    from tests.hf.factories import TEXT, make_model

    folder = make_model(family, tmp_path / family)
    out = tmp_path / "s.svg"
    assert main(["export", "--model", str(folder), "--text", TEXT, "--view", "steps", "-o", str(out),
                 "--size", "1600x900"]) == 0
    text = " ".join(svg_texts(out))
    assert want in text and not_want not in text


def test_cross_attention_steps_project_the_encoders_output(tmp_path, capsys):
    from attnviz.cli import main
    from tests.gui.walkthrough_fixtures import svg_texts

    out = tmp_path / "s.svg"
    assert main(["export", "--model", "translate", "--part", "cross", "--view", "steps", "-o", str(out)]) == 0
    assert "the encoder's output at source token j" in " ".join(svg_texts(out))
    assert main(["steps", "--model", "translate", "--part", "cross"]) == 0
    assert "k_j = e_j W_K" in capsys.readouterr().out
    assert main(["steps", "--model", "translate", "--part", "self"]) == 0
    said = capsys.readouterr().out
    assert "k_j = x_j W_K" in said and "encoder's output" not in said  # control: self-attention reads X
