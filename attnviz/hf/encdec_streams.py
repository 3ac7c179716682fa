"""The residual streams and embeddings of a Hugging Face encoder–decoder, read with forward hooks.

The attention calls themselves come from :class:`attnviz.hf.attention_record.AttentionRecorder`; this
adds, per stack (encoder, decoder) and per layer: the stream entering the layer, the stream after its
self-attention sub-layer (``h``) and after the whole layer (``resid``), and the token and position
embeddings. Two layer layouts are known:

- T5 (``layer.layer[0]`` is the self-attention sub-layer, its output is ``h``);
- BART and the families built like it (Marian, mBART, Pegasus, …: ``self_attn_layer_norm``): post-LN
  models (the norm runs after ``self_attn``) give ``h`` as that norm's output, pre-LN models as the
  input of the next norm (``encoder_attn_layer_norm`` in the decoder, ``final_layer_norm`` in the encoder).
  Which one a model is, the hooks see in the run itself (the order the norm and the attention run in).

A layer laid out otherwise gets no ``h`` (the trace says so), everything else is unaffected.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["StreamRecorder", "stack_layers"]


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def stack_layers(stack: nn.Module) -> list[nn.Module]:
    """The layers of one stack: its first ModuleList (``layers`` in BART, ``block`` in T5)."""
    for child in stack.children():
        if isinstance(child, nn.ModuleList):
            return list(child)
    raise LookupError(f"{type(stack).__name__} has no list of layers")


class StreamRecorder:
    """Forward hooks on both stacks; ``parts["enc"|"self"]`` → {"layers": [dict per layer call], "emb": dict}.

    Tensors are detached; the hooks never change an input or output and are removed on exit (also after
    an exception)."""

    def __init__(self, model: nn.Module):
        self.handles: list = []
        self.current: str | None = None
        self.parts: dict[str, dict] = {"enc": {"layers": [], "emb": {}}, "self": {"layers": [], "emb": {}}}
        self.stacks = {"enc": model.get_encoder(), "self": model.get_decoder()}
        try:
            for part, stack in self.stacks.items():
                self._pre(stack, lambda m, a, kw, p=part: setattr(self, "current", p))
                try:
                    layers = stack_layers(stack)
                except LookupError:  # the capture says the streams are missing
                    layers = []
                for layer in layers:
                    self._layer(part, layer)
                self._embeddings(part, stack)
        except BaseException:
            self.__exit__()
            raise

    # -- hooks -------------------------------------------------------------------------------------
    def _pre(self, mod, fn):
        def hook(m, args, kwargs):
            fn(m, args, kwargs)  # returning None leaves the inputs unchanged

        self.handles.append(mod.register_forward_pre_hook(hook, with_kwargs=True))

    def _post(self, mod, fn):
        def hook(m, args, out):
            fn(m, args, out)  # returning None leaves the output unchanged

        self.handles.append(mod.register_forward_hook(hook))

    def _rec(self, part: str) -> dict:
        return self.parts[part]["layers"][-1]

    def _layer(self, part: str, layer: nn.Module) -> None:
        def begin(m, args, kwargs):
            x = args[0] if args else kwargs.get("hidden_states")
            self.parts[part]["layers"].append({"stream": x.detach(), "order": []})

        self._pre(layer, begin)
        self._post(layer, lambda m, a, o: self._rec(part).__setitem__("resid", _first(o).detach()))
        sub = getattr(layer, "layer", None)
        if isinstance(sub, nn.ModuleList) and len(sub):  # T5: layer[0] is residual + self-attention
            self._post(sub[0], lambda m, a, o: self._rec(part).__setitem__("h", _first(o).detach()))
            return
        norm, attn = getattr(layer, "self_attn_layer_norm", None), getattr(layer, "self_attn", None)
        if not isinstance(norm, nn.Module) or not isinstance(attn, nn.Module):
            return
        # which ran first tells pre-LN (norm, then attention) from post-LN (attention, then norm)
        self._pre(attn, lambda m, a, kw: self._rec(part)["order"].append("attn"))
        self._pre(norm, lambda m, a, kw: self._rec(part)["order"].append("norm"))
        self._post(norm, lambda m, a, o: self._rec(part).__setitem__("post_h", _first(o).detach()))
        following = getattr(layer, "encoder_attn_layer_norm", None) if part == "self" else None
        following = following if isinstance(following, nn.Module) else getattr(layer, "final_layer_norm", None)
        if isinstance(following, nn.Module):
            self._pre(following, lambda m, a, kw: self._rec(part).setdefault(
                "pre_h", (a[0] if a else kw["hidden_states"]).detach()))

    def _embeddings(self, part: str, stack: nn.Module) -> None:
        emb = self.parts[part]["emb"]
        tokens = getattr(stack, "embed_tokens", None)
        if isinstance(tokens, nn.Module):
            # the stack's own scale (Marian, Pegasus multiply outside the module; BART's module scales itself)
            scale = getattr(stack, "embed_scale", None)
            scale = float(scale) if isinstance(scale, (int, float)) and not hasattr(tokens, "embed_scale") else 1.0

            def token(m, a, o):
                if self.current == part:  # T5 shares one embedding module between both stacks
                    emb.setdefault("token", o.detach() * scale)

            self._post(tokens, token)
        positions = getattr(stack, "embed_positions", None)
        if isinstance(positions, nn.Module):
            self._post(positions, lambda m, a, o: emb.setdefault("pos", o.detach()))
            weight = getattr(positions, "weight", None)  # a learned or fixed table (M2M-100: buffer "weights")
            weight = weight if isinstance(weight, torch.Tensor) else getattr(positions, "weights", None)
            if isinstance(weight, torch.Tensor) and weight.dim() == 2:
                offset = int(getattr(positions, "offset", 0) or 0)  # BART's, M2M-100's tables start 2 rows in
                emb["pos_table"] = weight.detach()[offset:]

    # -- results -----------------------------------------------------------------------------------
    def layer_records(self, part: str) -> list[dict]:
        """One dict per layer call: ``stream``, ``resid`` and (when the layout is known) ``h``."""
        out = []
        for rec in self.parts[part]["layers"]:
            rec = dict(rec)
            order = rec.pop("order")
            post, pre = rec.pop("post_h", None), rec.pop("pre_h", None)
            if "h" not in rec and order:
                h = post if order[0] == "attn" else pre
                if h is not None:
                    rec["h"] = h
            out.append(rec)
        return out

    def embeddings(self, part: str) -> dict:
        return self.parts[part]["emb"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles.clear()
