"""A model's facts for the user, the same for every adapter."""

from __future__ import annotations

__all__ = ["describe_loaded", "refuse_target"]


def describe_loaded(loaded, source: str) -> dict:
    """Name, source, kind, task, parameter count and dtype, layers, heads, labels and held-out metrics of a model."""
    cfg = loaded.config
    seq2seq = cfg.kind == "encoder-decoder"
    return {
        "name": loaded.name,
        "source": source,
        "kind": cfg.kind,
        "task": loaded.task,
        "n_params": loaded.n_params,
        "dtype": loaded.dtype,  # what the weights run in (a float16/bfloat16 checkpoint runs in its own)
        # an encoder–decoder's n_layers counts its encoder; the trace's n_layers is the decoder's
        "n_layers": cfg.dec_layers if seq2seq else cfg.n_layers,
        "n_enc_layers": cfg.n_layers if seq2seq else 0,
        "n_heads": cfg.n_heads,
        "d_model": cfg.d_model,
        "max_len": cfg.max_len,
        "labels": loaded.info.get("labels"),
        "metrics": dict(loaded.info.get("metrics") or {}),
        "path": str(loaded.path) if loaded.path else None,
    }


def refuse_target(loaded, target_text) -> None:
    """A target (the decoder's input) is for encoder–decoders only: any other model refuses it in one line."""
    if target_text is not None and loaded.config.kind != "encoder-decoder":
        from attnviz.errors import InputError

        raise InputError(f"a target sets what an encoder–decoder's decoder reads; {loaded.name} is "
                         f"{'an' if loaded.config.kind[0] in 'ae' else 'a'} {loaded.config.kind} model")
