"""The memory refusal counts real bytes: an already loaded model's size is named (not "0.00 GB"), a float16
checkpoint counts 2 bytes a parameter, and an on-demand capture has no T² term."""

from attnviz.models.config import ModelConfig
from attnviz.models.memory import FLOAT_BYTES, count_parameters, estimate_memory


def _cfg():
    return ModelConfig(kind="decoder", vocab_size=49152, n_layers=30, n_heads=9, n_kv_heads=3, d_model=576,
                       mlp_ratio=1536 / 576, max_len=8192, head="lm", pos="none")


def test_loaded_model_size_is_named():
    est = estimate_memory(_cfg(), 2095, copies=0)
    n = count_parameters(_cfg())
    assert est.params == 0  # already in memory: not part of the new need
    assert f"({n * FLOAT_BYTES / 2**30:,.2f} GB, already in memory)" in est.describe()
    assert "(0.00 GB" not in est.describe()  # negative control of the bug's message
    half = estimate_memory(_cfg(), 2095, copies=1, weight_bytes=2 * n)
    assert half.params == 2 * n and f"({2 * n / 2**30:,.2f} GB)" in half.describe()


def test_on_demand_has_no_square_term():
    full = [estimate_memory(_cfg(), t, copies=0).activations for t in (1000, 2000)]
    lean = [estimate_memory(_cfg(), t, copies=0, on_demand=True).activations for t in (1000, 2000)]
    assert lean[1] == 2 * lean[0]  # linear in T
    assert full[1] > 3 * full[0]  # the T×T maps dominate a full capture (negative control)
