"""A float16 model on a device without a float16 kernel for one of its ops runs in float32 and says so in one
line (trace notice: CLI stderr and the app; a Python warning from attnviz.load). This machine's CPU computes
every op of these families in float16, so the missing kernel is simulated: nn.Linear raising PyTorch's own
message for 'Half' inputs. Negative control: without the simulation the model stays float16, with no notice."""

from __future__ import annotations

import pytest
import torch

from attnviz.hf.dtype_support import unsupported_op
from attnviz.hf.loader import load_hf_model

from .factories import make_model

MESSAGE = "\"addmm_impl_cpu_\" not implemented for 'Half'"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_model("llama", tmp_path_factory.mktemp("dtype_fallback") / "llama", max_pos=64)


@pytest.fixture
def no_half_linear(monkeypatch):
    real = torch.nn.Linear.forward

    def forward(self, x):
        if x.dtype == torch.float16:
            raise RuntimeError(MESSAGE)
        return real(self, x)

    monkeypatch.setattr(torch.nn.Linear, "forward", forward)


def test_a_missing_float16_kernel_runs_float32_with_one_line(folder, no_half_linear, capsys):
    from attnviz.cli import main
    from attnviz.runtime import run_trace

    loaded = load_hf_model(folder, device="cpu", dtype="float16")
    assert next(loaded.model.parameters()).dtype == torch.float32 and loaded.info["dtype"] == "float32"
    notice = loaded.info["notice"]
    assert "float16 weights run in float32" in notice and "addmm_impl_cpu_" in notice and "\n" not in notice
    trace = run_trace(loaded, text="the cat sat", precision="float32", rollout=False)
    assert notice in trace.meta["notice"]
    out = folder.parent / "t.npz"
    assert main(["trace", "--model", str(folder), "--dtype", "float16", "--text", "the cat sat", "-o", str(out)]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "float32" in line]
    assert len(err) == 1 and err[0].startswith("attnviz: note:") and "float16 weights run in float32" in err[0]


def test_attnviz_load_warns_with_the_same_line(folder, no_half_linear):
    import attnviz.api as api

    with pytest.warns(UserWarning, match="float16 weights run in float32"):
        api.load(str(folder), dtype="float16", device="cpu")


def test_where_every_kernel_exists_the_model_stays_float16(folder):  # negative control
    loaded = load_hf_model(folder, device="cpu", dtype="float16")
    assert next(loaded.model.parameters()).dtype == torch.float16 and "notice" not in loaded.info


def test_other_errors_are_not_taken_for_a_missing_kernel():
    assert unsupported_op(RuntimeError(MESSAGE), "float16") == MESSAGE
    assert unsupported_op(RuntimeError(MESSAGE), "bfloat16") is None  # another dtype's kernel
    assert unsupported_op(RuntimeError("index out of range in self"), "float16") is None


def test_the_load_memory_check_counts_the_bytes_of_the_dtype_it_runs_in(folder, monkeypatch):
    from attnviz.errors import ModelLoadError
    from attnviz.hf import loader
    from attnviz.hf.detect import detect_hf_folder

    numel = loader.weights_numel(detect_hf_folder(folder))
    free = 256e6 + numel * 1.2 * 3  # room for 2 bytes a parameter, not for 4
    monkeypatch.setattr(loader, "available_memory", lambda: free)
    half = load_hf_model(folder, device="cpu", dtype="float16")
    assert next(half.model.parameters()).dtype == torch.float16
    with pytest.raises(ModelLoadError, match="needs about"):  # negative control: float32 needs twice the bytes
        load_hf_model(folder, device="cpu", dtype="float32")
    assert loader.param_bytes({"torch_dtype": "bfloat16"}) == 2 and loader.param_bytes({"dtype": "float32"}) == 4
