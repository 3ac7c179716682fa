"""From a model name and an input to a Trace: the one path the CLI, the GUI and notebooks share.

model folder → adapter.load → LoadedModel; input (text | image) → adapter.prepare_* → adapter.capture
→ Trace (+ default rollout). The adapter is chosen by the folder (loading) or by the LoadedModel.
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError, ModelLoadError
from attnviz.runtime.adapter import CaptureOptions
from attnviz.runtime.huggingface import HuggingFaceAdapter
from attnviz.runtime.native import NativeAdapter

__all__ = ["ADAPTERS", "adapter_for", "load_model", "describe_model", "prepare_text", "prepare_image", "run_trace",
           "probabilities_only"]

# Asked in order: a Hugging Face folder also has a config.json, so it is recognised first.
ADAPTERS = (HuggingFaceAdapter(), NativeAdapter())


def adapter_for(loaded):
    """The adapter that loaded ``loaded``."""
    for adapter in ADAPTERS:
        if adapter.owns(loaded):
            return adapter
    raise ModelLoadError(f"no model adapter knows {loaded.name!r} (source {loaded.info.get('source')!r})")


def load_model(name_or_dir, device=None, allow_pickle: bool = False, dtype: str = "auto"):
    """Load a bundled model by name or a model folder of any supported kind → LoadedModel."""
    from attnviz.models.checkpoint import resolve_model_path

    path = resolve_model_path(name_or_dir)
    for adapter in ADAPTERS:
        if adapter.can_load(path):
            return adapter.load(path, device=device, allow_pickle=allow_pickle, dtype=dtype)
    raise ModelLoadError(f"{path} has no config.json: not a model directory")


def describe_model(loaded) -> dict:
    """The model's facts for the user (name, source, kind, task, parameters, layers, heads, metrics)."""
    return adapter_for(loaded).describe(loaded)


def prepare_text(loaded, text: str, truncate: bool = False, target_text: str | None = None):
    """Typed text → model inputs (:class:`~attnviz.capture.Prepared`), by the model's and its task's rules;
    ``target_text``: what an encoder–decoder's decoder reads (default: its own greedy output)."""
    return adapter_for(loaded).prepare_text(loaded, text, truncate=truncate, target_text=target_text)


def prepare_image(loaded, image):
    """Load (path, PIL image or array) and preprocess an image for a vision model."""
    return adapter_for(loaded).prepare_image(loaded, image)


def _check_input_memory(loaded, prep, grad: bool) -> None:
    """A native model was checked at load for a short input; a longer one is checked before it runs."""
    from attnviz.models.config import ModelConfig
    from attnviz.models.memory import LOAD_CHECK_TOKENS, check_config_memory, forward_bytes

    n = max(len(prep.tokens), len(prep.src_tokens))
    if isinstance(loaded.config, ModelConfig) and n > LOAD_CHECK_TOKENS:
        # a Hugging Face decoder/encoder captures long inputs on demand (q, k, lse: no T×T); real weight bytes
        from attnviz.capture import spill
        from attnviz.capture.compute_dtype import array_bytes
        from attnviz.capture.on_demand import ON_DEMAND_T

        hf = loaded.info.get("source") == "huggingface" and not prep.src_tokens
        params = getattr(getattr(loaded, "model", None), "parameters", None)
        weight_bytes = sum(p.numel() * p.element_size() for p in params()) if callable(params) else None
        element = array_bytes(getattr(loaded, "dtype", None))  # float16 model: 2
        budget = spill.capture_budget(forward_bytes(loaded.config.d_model, loaded.config.mlp_ratio, n, element))
        try:
            check_config_memory(loaded.config, tokens=n, what=f"an input of {n:,} tokens", grad=grad, copies=0,
                                on_demand=hf and not grad and n >= ON_DEMAND_T, weight_bytes=weight_bytes,
                                spill_budget=budget,  # layers beyond it go to disk
                                element_bytes=element)
        except ModelLoadError as exc:
            raise InputError(str(exc)) from None


def _layers_kept(loaded, adapter, layers, none_ok: bool = False) -> tuple[int, ...] | None:
    """The sorted layer indices kept in full, for an adapter that keeps only some layers in full (Hugging Face
    decoders and encoders); a clear refusal for others and for indices the model does not have.
    ``none_ok``: an empty ``layers`` keeps no layer in full (an on-demand capture for a data-set scan)."""
    if layers is None:
        return None
    if none_ok and not len(layers) and adapter.keeps_some_layers(loaded):
        return ()
    if not adapter.keeps_some_layers(loaded):
        raise InputError(f"only some layers in full is for Hugging Face decoder and encoder models: {loaded.name} "
                         "is traced in full (leave --layers out)")
    n = int(loaded.config.n_layers)
    wanted = sorted({int(i) for i in layers})
    bad = [i for i in wanted if not 0 <= i < n]
    if not wanted or bad:
        raise InputError(f"{loaded.name} has layers 0–{n - 1}: no layer {', '.join(map(str, bad)) or 'given'}")
    return tuple(wanted)


def probabilities_only(loaded) -> dict:
    """``run_trace`` options for a capture that keeps only what recomputes the probabilities (q, k and each row's
    log-sum-exp per layer: no (H, T, T) map, no walkthrough arrays), where the model has that capture (Hugging
    Face text decoders and encoders); {} for the others (an image model's few hundred patches keep their maps:
    Swin's windows are not read on the fast kernel). What a data-set scan and an interactive HTML page read:
    an input of any length costs O(T · d) to keep."""
    if loaded.config.kind in ("decoder", "encoder") and adapter_for(loaded).keeps_some_layers(loaded):
        return {"layers": [], "attention": "on_demand"}
    return {}


def run_trace(loaded, text: str | None = None, image=None, grad: bool = False, target: int | None = None,
              truncate: bool = False, precision: str = "auto", rollout: bool = True, target_text: str | None = None,
              layers=None, preview=None, preview_layers=None, attention: str = "auto"):
    """Prepare the input, capture a Trace and add the default rollout.

    ``target``: the class or token whose gradient ``grad`` records; ``target_text``: the output an
    encoder–decoder's decoder reads (default: its own greedy output; refused by other models); ``layers``:
    the layer indices kept in full (Hugging Face decoders and encoders; the others keep their probabilities);
    ``preview(LayerPreview)``: called during the forward as each layer's attention is computed (Hugging Face
    decoders and encoders; other models report nothing before the trace is complete); ``preview_layers``: the
    layers it is called for (default all; the others are not copied); ``attention``: "auto", or "on_demand"
    (Hugging Face decoders and encoders: the fastest kernel at any length, every probability recomputed from
    q, k and lse when asked; with ``layers=[]`` no layer keeps its walkthrough arrays, the cheapest capture,
    what a data-set scan reads)."""
    if (text is None) == (image is None):
        raise InputError("give exactly one input: text or an image")
    adapter = adapter_for(loaded)
    kept = _layers_kept(loaded, adapter, layers, none_ok=attention == "on_demand")
    if attention != "auto" and not adapter.keeps_some_layers(loaded):
        raise InputError(f"attention on demand is for Hugging Face decoder and encoder models, not {loaded.name}")
    if image is not None and target_text is not None:
        raise InputError("a target is the output text of an encoder–decoder; image models take none")
    prep = adapter.prepare_image(loaded, image) if image is not None else prepare_text(loaded, text, truncate,
                                                                                       target_text)
    _check_input_memory(loaded, prep, grad)
    # the model's stored held-out metrics travel with its traces: a figure can state what the model measured
    meta = {"task": loaded.task, "model_name": loaded.name, "labels": loaded.info.get("labels"),
            "input_text": text, "metrics": dict(loaded.info.get("metrics") or {}), **prep.meta}
    options = CaptureOptions(grad=grad, target=target, precision=precision, layers=kept, preview=preview,
                             preview_layers=None if preview_layers is None else tuple(int(i) for i in preview_layers),
                             attention=attention)
    trace = adapter.capture(loaded, prep, meta, options)
    from attnviz.runtime.finite_weights import note_nonfinite_weight

    note_nonfinite_weight(trace.meta, loaded.model)  # a shared model's NaN weight: named in one line
    if prep.src_tokens:
        trace.arrays["src_tokens"] = np.array(prep.src_tokens, dtype=str)
    if prep.image is not None:
        trace.arrays["image"] = prep.image.astype(np.float32)
    from attnviz.analysis.rollout import MAX_ROLLOUT_T
    from attnviz.capture.trace import LARGE_T

    # computed when something reads trace["rollout"] (or saves the trace), not per keystroke. A trace whose maps
    # are recomputed on demand holds no (T, T) array beyond LARGE_T tokens, so it gets none by default (saved, a
    # 3,600-token trace wrote a 52 MB rollout made from every layer's whole maps); asked for, compute_rollout
    # streams the layers, and refuses in one line above MAX_ROLLOUT_T
    T_keys = trace.probs_shape(0)[-1]
    if rollout and T_keys <= MAX_ROLLOUT_T and (T_keys <= LARGE_T or not trace.description.on_demand):
        from attnviz.analysis.rollout import DeferredRollout

        trace.deferred["rollout"] = DeferredRollout(trace)
    return trace
