"""The one line a trace carries when its arrays were stored in float16 although the model computed in more.

``precision="float16"`` (and "auto" above ``LARGE_T`` tokens for attnviz's own models, whose maps are kept) halves
the memory and costs exactness; the figures below were measured (issue 34) against the same input traced with
``precision="auto"`` (float32 arrays), every layer's probabilities compared:

* maps stored (short inputs): each probability rounded once to float16, so within 2⁻¹² ≈ 2.4e-4 of the model's
  (half a float16 unit just below 1); measured 2.40e-4 (coref), 2.01e-4 (translate), 2.43e-4 (shapes).
* maps recomputed on demand (long Hugging Face inputs) from q, k and the log-sum-exp kept in float16: the
  rounding of q·kᵀ grows with the scores, so the error does too: 1.2e-6 on a random 30-layer Llama at 600 tokens
  (flat heads, largest weight 0.01), 4.5e-3 on a 2-layer Llama whose q and k weights were scaled ×12 (sharp
  heads, largest weight 0.998) at 1,000 tokens. Qt-free.
"""

from __future__ import annotations

__all__ = ["half_storage_notice"]



def half_storage_notice(description) -> str | None:
    """The line for a trace whose arrays are float16 while its model ran in float32 or bfloat16, else None."""
    if description.precision != "float16" or description.compute_dtype == "float16":
        return None  # float32 arrays, or a float16 model's own values: nothing lost
    if description.on_demand:
        return ("arrays stored in float16: probabilities recomputed from float16 q and k differ from the model's by "
                "up to ~5e-3 on sharp heads (precision \"auto\" keeps them exact)")
    return "arrays stored in float16: probabilities within 2.5e-4 of the model's (float16 rounding)"
