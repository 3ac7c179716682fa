"""The residual stream around each attention call of a Hugging Face model: block input and output, the
stream after the attention sub-layer, and an output projection that lives outside the attention module.

Found from the model's structure, not from per-family paths: a *block* is the nearest ancestor of an
attention module that is an item of an ``nn.ModuleList`` (``model.layers.3``, ``encoder.layer.0``, ALBERT's
shared ``albert_layers.0``). Per block call (in call order) it records ``stream`` (its ``hidden_states``
input), ``resid`` (its first output) and, where one can be named, ``h``: pre-LN blocks hand the stream
after the attention sub-layer to their second norm (``post_attention_layernorm``, ``ln_2``, ``final_layer_norm``,
``layernorm_after``, Gemma's ``pre_feedforward_layernorm``); the capture keeps it only when it equals
stream + attention output (so GPT-NeoX's parallel residual or Gemma's extra norms never show a wrong R_mid).
Post-LN families name the module whose output is LayerNorm(stream + attention) (:mod:`attnviz.hf.families`).

BERT-style models keep the output projection in a sibling (``attention.output.dense``); its input and
output are recorded against the attention module they follow.
"""

from __future__ import annotations

import torch
from torch import nn

from attnviz.hf.module_plan import module_plan
from attnviz.hf.projections import _OUT, is_linear

__all__ = ["BlockRecorder", "H_INPUTS", "X_INPUTS"]

H_INPUTS = ("pre_feedforward_layernorm", "post_attention_layernorm", "ln_2", "final_layer_norm",
            "layernorm_after")
# a pre-norm block's first norm, whose output the attention reads (a long capture keeps it as a rule over the
# stream entering the block when it reproduces the attention's input: attnviz.hf.layer_arrays)
X_INPUTS = ("input_layernorm", "ln_1", "layernorm_before", "ln_attn", "norm_1", "attention_norm")


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _block_of(model: nn.Module, module: nn.Module, parents: dict) -> nn.Module | None:
    """Nearest ancestor of ``module`` that is an item of a ModuleList (None: not inside a stack)."""
    node = module
    while node is not None:
        parent = parents.get(id(node))
        if isinstance(parent, nn.ModuleList):
            return node
        node = parent
    return None


def _resolve(root: nn.Module, path: str) -> nn.Module | None:
    node = root
    for part in path.split("."):
        node = getattr(node, part, None)
        if not isinstance(node, nn.Module):
            return None
    return node


class BlockRecorder:
    """Forward hooks on the blocks of ``attention_modules`` (removed on exit, also after an exception).

    Parameters
    ----------
    model : the transformers model.
    attention_modules : the modules that call the attention interface.
    attention_calls : the recorder's live list of calls: each block record notes how many calls came
        before it (``first_call``), which ties every call to its block.
    post_h : (path relative to a block, "in" | "out") of a post-LN family's stream after attention, or None.
    on_end : called with a block's record as soon as the block has run (a long capture converts that
        block's calls then and lets go of their tensors: :mod:`attnviz.hf.layer_convert`).
    plan : the model's :class:`~attnviz.hf.module_plan.ModulePlan` checked in this capture already (default: looked up).
    """

    def __init__(self, model: nn.Module, attention_modules, attention_calls: list, post_h=None, on_end=None,
                 plan=None):
        self.calls: list[dict] = []
        self.on_end = on_end
        self.outputs: dict[int, list] = {}  # id(attention module) → [(input, output)] per call
        self.out_modules: dict[int, nn.Module] = {}  # id(attention module) → its outside output projection
        self._attention_calls = attention_calls
        self._handles = []
        # the attention recorder's plan when it hands it over (its fingerprint walk is ~5 ms on a 30-layer model)
        parents = (plan or module_plan(model)).parents(model)
        try:
            blocks = {}
            for attn in attention_modules:
                block = _block_of(model, attn, parents)
                if block is not None:
                    blocks[id(block)] = block
                if not any(n in dict(attn.named_children()) and is_linear(getattr(attn, n)) for n in _OUT):
                    self._hook_outside_output(attn, parents.get(id(attn)))
            for block in blocks.values():
                self._hook_block(block, post_h)
        except BaseException:
            self.__exit__()
            raise

    def _hook_outside_output(self, attn: nn.Module, parent: nn.Module | None) -> None:
        dense = _resolve(parent, "output.dense") if parent is not None else None
        if dense is not None and is_linear(dense):
            seen = self.outputs.setdefault(id(attn), [])
            self.out_modules[id(attn)] = dense
            self._handles.append(dense.register_forward_hook(
                lambda m, a, o: seen.append((a[0].detach(), o.detach()))))

    def _hook_block(self, block: nn.Module, post_h) -> None:
        self._handles.append(block.register_forward_pre_hook(self._begin, with_kwargs=True))
        self._handles.append(block.register_forward_hook(self._end))
        if post_h is not None:
            mod, side = _resolve(block, post_h[0]), post_h[1]
            if mod is not None:
                self._handles.append(mod.register_forward_hook(
                    lambda m, a, o: self._put(block, "h", _first(o) if side == "out" else a[0])))
            return
        children = dict(block.named_children())
        name = next((n for n in H_INPUTS if n in children), None)
        if name is not None:
            self._handles.append(children[name].register_forward_pre_hook(
                lambda m, a: self._put(block, "h", a[0] if a else None)))

    def _begin(self, block, args, kwargs):
        stream = args[0] if args else kwargs.get("hidden_states")
        self.calls.append({"block": block, "stream": stream.detach() if isinstance(stream, torch.Tensor) else None,
                           "first_call": len(self._attention_calls)})

    def _end(self, block, args, out):
        self._put(block, "resid", _first(out))
        if self.on_end is not None:
            rec = next((r for r in reversed(self.calls) if r["block"] is block), None)
            if rec is not None:
                self.on_end(rec)

    def _put(self, block, key, value):
        for rec in reversed(self.calls):  # the innermost open call of this block
            if rec["block"] is block:
                if key not in rec and isinstance(value, torch.Tensor):
                    rec[key] = value.detach()
                return

    def block_of_call(self, index: int) -> dict | None:
        """The block record the attention call ``index`` ran in (None when it ran outside every block)."""
        found = None
        for rec in self.calls:
            if rec["first_call"] <= index:
                found = rec
        return found

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        # the callback is a bound method of the converter that holds this recorder: a reference cycle that kept
        # every layer's tensors (a trace's arrays are views of them) until Python's cycle collector ran, so the
        # next capture faulted fresh pages in (33k more minor faults a capture at 512 tokens on a 30-layer model)
        self.on_end = None
