"""Incremental decoding with a key/value cache: only the newest position runs through the decoder.

Greedy decoding without a cache re-runs the whole decoder over every token produced so far for each
new token, so an output of n tokens costs n full passes (about ten per keystroke for the bundled
translation examples). Causal self-attention makes the earlier positions' keys and values independent
of later tokens, so they can be kept: each step embeds one token, projects its query, key and value,
appends the key and value to the layer's cache and attends over the cache; the encoder memory's
cross-attention keys and values are projected once per layer. The arithmetic is the module's own
(``F.linear``, ``F.layer_norm``, ``F.scaled_dot_product_attention`` with the module's weights, scale
and head gate), only skipping the rows whose result is already known. At the bundled models' size a
step costs its number of tensor operations, not its arithmetic, so the weights are read once per
decoding instead of through every module call, and ``generate`` runs the loop in inference mode.

The cache reads the modules' weights directly, so it is used only when the plain forward pass would do
exactly what it spells out (:func:`cache_usable`): evaluation mode, the fused attention path, nothing
recording, no forward hooks, causal self-attention (a what-if lab's "causal mask off" makes every
position see later ones, which no cache can follow), and attnviz's own module classes. Otherwise the
callers fall back to the full re-run. The traces the app draws never come from here: they are captured
by the teacher-forced forward pass over the chosen tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnviz.models.attention import Attention
from attnviz.models.blocks import MLP, Block, PositionalEncoding, TokenEmbedding

__all__ = ["cache_usable", "DecoderCache"]


def _global_hooks() -> bool:
    """True when hooks registered for every module exist (``register_module_forward_hook``)."""
    from torch.nn.modules import module as mod

    return any(getattr(mod, name, None) for name in ("_global_forward_hooks", "_global_forward_pre_hooks",
                                                      "_global_forward_hooks_always_called"))


def cache_usable(model: nn.Module, stack: nn.Module, embed: nn.Module) -> bool:
    """Whether :class:`DecoderCache` computes exactly what ``model``'s own forward pass would.

    Parameters
    ----------
    model : the whole model (every module is checked for training mode, hooks and recording).
    stack : the causal decoder :class:`~attnviz.models.text.Stack` that would be cached.
    embed : the decoder's :class:`~attnviz.models.blocks.TokenEmbedding`.
    """
    if _global_hooks():
        return False
    for m in model.modules():
        # vars(): a module without the attribute would raise (and catch) AttributeError in __getattr__
        if m.training or m._forward_hooks or m._forward_pre_hooks or vars(m).get("record") is not None:
            return False
        if isinstance(m, Attention) and not m.fused:
            return False
    if type(embed) is not TokenEmbedding or type(embed.pos) is not PositionalEncoding:
        return False
    if type(embed.tok) is not nn.Embedding or embed.tok.max_norm is not None:
        return False
    if type(stack.norm) not in (nn.LayerNorm, nn.Identity):
        return False
    for block in stack.blocks:
        if type(block) is not Block or type(block.mlp) is not MLP or type(block.attn) is not Attention:
            return False
        if not block.attn.causal:  # the what-if lab switched the causal mask off
            return False
        if block.cross is not None and (type(block.cross) is not Attention or type(block.ln_cross) is not nn.LayerNorm):
            return False
        if type(block.ln1) is not nn.LayerNorm or type(block.ln2) is not nn.LayerNorm:
            return False
        if type(block.mlp.act) not in (nn.GELU, nn.ReLU):
            return False
    return True


def _linear(lin: nn.Linear) -> tuple:
    return (lin.weight, lin.bias)


def _stacked(*lins: nn.Linear) -> tuple:
    """One (weight, bias) computing the outputs of several Linear layers side by side."""
    weight = torch.cat([lin.weight for lin in lins])
    bias = None if lins[0].bias is None else torch.cat([lin.bias for lin in lins])
    return (weight, bias)


def _norm(ln: nn.Module) -> tuple | None:
    """(shape, weight, bias, eps) of a LayerNorm; None for nn.Identity (a post-LN stack has no final norm)."""
    if isinstance(ln, nn.LayerNorm):
        return (ln.normalized_shape, ln.weight, ln.bias, ln.eps)
    return None


def _apply_norm(ln: tuple | None, x: torch.Tensor) -> torch.Tensor:
    return x if ln is None else F.layer_norm(x, *ln)


def _gate(attn: Attention):
    # Attention.forward: z * head_gate.to(z.dtype).view(1, -1, 1, 1), the what-if head ablation
    return None if attn.head_gate is None else attn.head_gate.view(1, -1, 1, 1)


class _Layer:
    """One decoder block's weights, read once per decoding, and its cached keys/values.

    The module attribute look-ups of a forward pass cost about a tenth of a tiny model's step, so the
    tensors are held here as plain attributes; the what-if switches (scale, head gate) are read now,
    as they hold for the whole decoding.
    """

    def __init__(self, block: Block, batch: int, n_max: int, memory, memory_pad, like: torch.Tensor):
        a = block.attn
        self.pre = block.pre
        self.ln1, self.ln2 = _norm(block.ln1), _norm(block.ln2)
        self.heads, self.kv_heads, self.d_head = a.n_heads, a.n_kv_heads, a.d_head
        # q, k and v from one product: (H + 2 H_kv) · d_head output columns, W_Q's rows first
        self.qkv = _stacked(a.q_proj, a.k_proj, a.v_proj)
        self.o = _linear(a.o_proj)
        self.scale, self.gate, self.gqa = a.scale, _gate(a), a.group > 1
        mlp = block.mlp
        self.fc1, self.fc2 = _linear(mlp.fc1), _linear(mlp.fc2)
        self.gelu = mlp.act.approximate if isinstance(mlp.act, nn.GELU) else None  # None: ReLU
        shape = (batch, a.n_kv_heads, n_max, a.d_head)
        self.k = torch.empty(shape, dtype=like.dtype, device=like.device)
        self.v = torch.empty(shape, dtype=like.dtype, device=like.device)
        self.cross = block.cross is not None
        if self.cross:
            c = block.cross
            self.ln_cross = _norm(block.ln_cross)
            self.c_heads, self.c_d_head = c.n_heads, c.d_head
            self.c_q, self.c_o = _linear(c.q_proj), _linear(c.o_proj)
            self.c_scale, self.c_gate, self.c_gqa = c.scale, _gate(c), c.group > 1
            self.c_k = _split(F.linear(memory, *_linear(c.k_proj)), c.n_kv_heads, c.d_head)  # (B, Hkv, Ts, dh)
            self.c_v = _split(F.linear(memory, *_linear(c.v_proj)), c.n_kv_heads, c.d_head)
            # the boolean "may attend" mask Attention._fused builds from the padding, (B, 1, 1, Ts)
            self.c_mask = None if memory_pad is None else ~memory_pad[:, None, None, :]

    def self_attention(self, h: torch.Tensor, start: int, end: int) -> torch.Tensor:
        B, T, _ = h.shape
        H, Hkv = self.heads, self.kv_heads
        qkv = F.linear(h, *self.qkv).view(B, T, H + 2 * Hkv, self.d_head).transpose(1, 2)  # (B, H+2Hkv, T, dh)
        q = qkv[:, :H]
        self.k[:, :, start:end] = qkv[:, H : H + Hkv]
        self.v[:, :, start:end] = qkv[:, H + Hkv :]
        # one new query sees every cached key; a prompt from position 0 gets the square causal mask
        z = F.scaled_dot_product_attention(q, self.k[:, :, :end], self.v[:, :, :end], is_causal=end - start > 1,
                                           scale=self.scale, enable_gqa=self.gqa)
        return _merge(z, self.gate, self.o)

    def cross_attention(self, h: torch.Tensor) -> torch.Tensor:
        q = _split(F.linear(h, *self.c_q), self.c_heads, self.c_d_head)
        z = F.scaled_dot_product_attention(q, self.c_k, self.c_v, attn_mask=self.c_mask, scale=self.c_scale,
                                           enable_gqa=self.c_gqa)
        return _merge(z, self.c_gate, self.c_o)

    def mlp(self, h: torch.Tensor) -> torch.Tensor:
        h = F.linear(h, *self.fc1)
        h = F.relu(h) if self.gelu is None else F.gelu(h, approximate=self.gelu)
        return F.linear(h, *self.fc2)

    def __call__(self, x: torch.Tensor, start: int, end: int) -> torch.Tensor:
        """Block.forward in evaluation mode (dropout is the identity) for positions start … end-1."""
        if self.pre:
            x = x + self.self_attention(F.layer_norm(x, *self.ln1), start, end)
            if self.cross:
                x = x + self.cross_attention(F.layer_norm(x, *self.ln_cross))
            return x + self.mlp(F.layer_norm(x, *self.ln2))
        x = F.layer_norm(x + self.self_attention(x, start, end), *self.ln1)
        if self.cross:
            x = F.layer_norm(x + self.cross_attention(x), *self.ln_cross)
        return F.layer_norm(x + self.mlp(x), *self.ln2)


def _split(x: torch.Tensor, n: int, d: int) -> torch.Tensor:
    B, T, _ = x.shape
    return x.view(B, T, n, d).transpose(1, 2)  # (B, n, T, d)


def _merge(z: torch.Tensor, gate, o: tuple) -> torch.Tensor:
    """The rest of Attention.forward after the attention: head gate, heads side by side, output projection."""
    if gate is not None:
        z = z * gate.to(z.dtype)
    B, H, T, dh = z.shape
    return F.linear(z.transpose(1, 2).reshape(B, T, H * dh), *o)


class DecoderCache:
    """Key/value cache of a causal decoder stack; :meth:`step` feeds it the next tokens.

    Parameters
    ----------
    stack, embed, head : the decoder :class:`~attnviz.models.text.Stack`, its token embedding and the
        output projection.
    batch : rows decoded together.
    n_max : most positions the cache will hold.
    memory, memory_pad : encoder output (B, Ts, D) and its padding (B, Ts) for cross-attention, or None.
    """

    def __init__(self, stack, embed, head, batch: int, n_max: int, memory=None, memory_pad=None):
        like = embed.tok.weight
        self.tok = embed.tok.weight
        pos = embed.pos
        self.pos = pos.table if pos.table is not None and pos.enabled else None  # PositionalEncoding.forward
        self.layers = [_Layer(b, batch, n_max, memory, memory_pad, like) for b in stack.blocks]
        self.norm, self.head = _norm(stack.norm), _linear(head)
        self.length = 0  # positions cached so far
        self.n_max = n_max

    @torch.no_grad()
    def step(self, ids: torch.Tensor) -> torch.Tensor:
        """Run ``ids`` (B, Tn), the tokens at positions ``length … length+Tn-1``; → logits (B, Tn, V).

        Several tokens at once only from an empty cache (a prompt), where the causal mask is the usual
        square one.
        """
        start, n = self.length, ids.shape[1]
        end = start + n
        if n > 1 and start:
            raise ValueError("after the first step the cache takes one token at a time")
        if end > self.n_max:
            raise ValueError(f"the cache holds {self.n_max} positions; position {end - 1} does not fit")
        x = F.embedding(ids, self.tok)  # (B, Tn, D)
        if self.pos is not None:
            if end > len(self.pos):  # past the positional table: the full pass fails there too
                raise ValueError(f"position {end - 1} is beyond the model's {len(self.pos)} positions")
            x = x + self.pos[start:end]
        for layer in self.layers:
            x = layer(x, start, end)
        self.length = end
        return F.linear(_apply_norm(self.norm, x), *self.head)
