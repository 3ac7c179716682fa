"""Text transformers: bidirectional encoder, causal decoder, encoder–decoder."""

from __future__ import annotations

import torch
from torch import nn

from attnviz.models.blocks import Block, TokenEmbedding
from attnviz.models.config import ModelConfig
from attnviz.models.kv_cache import DecoderCache, cache_usable

__all__ = ["TextEncoder", "TextDecoder", "EncoderDecoder", "Stack"]


class Stack(nn.Module):
    """Blocks applied in order, then a final LayerNorm when the blocks are pre-LN."""

    def __init__(self, cfg: ModelConfig, n: int, causal: bool = False, cross: bool = False):
        super().__init__()
        self.blocks = nn.ModuleList(Block(cfg, causal=causal, cross=cross) for _ in range(n))
        self.norm = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else nn.Identity()

    def forward(self, x, key_pad=None, memory=None, memory_pad=None):
        for block in self.blocks:
            x = block(x, key_pad=key_pad, memory=memory, memory_pad=memory_pad)
        return self.norm(x)


def _init_weights(module: nn.Module) -> None:
    # GPT-2 / BERT style: small normal weights, zero biases; keeps tiny models trainable fast.
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)


class TextEncoder(nn.Module):
    """Bidirectional encoder with a classification, token-classification or MLM head."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = TokenEmbedding(cfg, cfg.vocab_size)
        self.stack = Stack(cfg, cfg.n_layers)
        out = cfg.vocab_size if cfg.head == "mlm" else cfg.n_classes
        self.head = nn.Linear(cfg.d_model, out)
        _init_weights(self)

    def forward(self, ids, key_pad=None, pool_index=None):
        """ids: (B, T) → logits (B, C) for "classify" ((B, K, C) with a (B, K) ``pool_index``), else
        (B, T, C or V)."""
        h = self.stack(self.embed(ids), key_pad=key_pad)  # (B, T, D)
        if self.cfg.head != "classify":
            return self.head(h)
        if self.cfg.pool == "mean":
            if key_pad is None:
                pooled = h.mean(1)
            else:
                keep = (~key_pad).unsqueeze(-1).to(h.dtype)  # (B, T, 1)
                pooled = (h * keep).sum(1) / keep.sum(1).clamp_min(1)
        elif self.cfg.pool == "index":
            if pool_index is None:
                raise ValueError("this model classifies at a chosen token: pass pool_index")
            # (B,) reads one token per example → (B, C); (B, K) reads K tokens each → (B, K, C) (coref
            # trains every word's answer this way and reads only the pronoun's in the app)
            rows = torch.arange(h.shape[0], device=h.device)
            pooled = h[rows if pool_index.dim() == 1 else rows[:, None], pool_index]
        else:
            pooled = h[:, 0]
        return self.head(pooled)  # (B, C)


class TextDecoder(nn.Module):
    """Causal language model (GPT style): next-token logits at every position."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = TokenEmbedding(cfg, cfg.vocab_size)
        self.stack = Stack(cfg, cfg.n_layers, causal=True)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
        _init_weights(self)

    def forward(self, ids, key_pad=None):
        """ids: (B, T) → logits (B, T, V)."""
        return self.head(self.stack(self.embed(ids), key_pad=key_pad))

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, n_new: int, temperature: float = 0.0, generator=None,
                 cache: bool = True):
        """Append ``n_new`` tokens: greedy when temperature is 0, else sampled.

        With ``cache`` (and :func:`~attnviz.models.kv_cache.cache_usable`) each new token runs alone
        through the stack against cached keys and values while the sequence fits ``max_len``; past it the
        window slides, every position moves, and the whole window is re-run as without the cache.
        """
        max_len = self.cfg.max_len
        if not (cache and ids.shape[1] <= max_len and _plain(self, TextDecoder, "forward")
                and cache_usable(self, self.stack, self.embed)):
            return self._sample(ids, n_new, temperature, generator, lambda ids: self(ids[:, -max_len:])[:, -1])
        with torch.inference_mode():  # see EncoderDecoder.generate
            kv = DecoderCache(self.stack, self.embed, self.head, ids.shape[0], max_len)

            def next_logits(ids):
                if ids.shape[1] <= max_len:
                    return kv.step(ids[:, kv.length :])[:, -1]
                return self(ids[:, -max_len:])[:, -1]

            out = self._sample(ids, n_new, temperature, generator, next_logits)
        return out.clone()

    @staticmethod
    def _sample(ids, n_new: int, temperature: float, generator, next_logits) -> torch.Tensor:
        for _ in range(n_new):
            logits = next_logits(ids)  # (B, V)
            if temperature <= 0:
                nxt = logits.argmax(-1, keepdim=True)
            else:
                probs = torch.softmax(logits / temperature, -1)
                nxt = torch.multinomial(probs, 1, generator=generator)
            ids = torch.cat([ids, nxt], dim=1)
        return ids


class EncoderDecoder(nn.Module):
    """Encoder over the source, decoder with causal self-attention and cross-attention to it."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = TokenEmbedding(cfg, cfg.vocab_size)
        self.encoder = Stack(cfg, cfg.n_layers)
        self.tgt_embed = TokenEmbedding(cfg, cfg.tgt_vocab)
        self.decoder = Stack(cfg, cfg.dec_layers, causal=True, cross=True)
        self.head = nn.Linear(cfg.d_model, cfg.tgt_vocab)
        _init_weights(self)

    def encode(self, src, src_pad=None):
        return self.encoder(self.src_embed(src), key_pad=src_pad)  # (B, Ts, D)

    def decode(self, tgt, memory, tgt_pad=None, src_pad=None):
        h = self.decoder(self.tgt_embed(tgt), key_pad=tgt_pad, memory=memory, memory_pad=src_pad)
        return self.head(h)  # (B, Tt, V)

    def forward(self, src, tgt, src_pad=None, tgt_pad=None):
        return self.decode(tgt, self.encode(src, src_pad), tgt_pad, src_pad)

    @torch.no_grad()
    def generate(self, src, bos: int, eos: int, max_new: int, src_pad=None, cache: bool = True):
        """Greedy decoding from ``bos`` until every row produced ``eos`` or ``max_new`` tokens.

        With ``cache`` (and :func:`~attnviz.models.kv_cache.cache_usable`) each step runs only the newest
        token through the decoder against cached keys and values; else the whole output so far is
        re-decoded for every token. Both choose the same tokens (tested).
        """
        if cache and _plain(self, EncoderDecoder, "decode") and cache_usable(self, self.decoder, self.tgt_embed):
            # inference mode skips autograd's bookkeeping, ~15 % of a tiny model's step; the ids leave it
            # as an ordinary tensor (clone)
            with torch.inference_mode():
                memory = self.encode(src, src_pad)
                kv = DecoderCache(self.decoder, self.tgt_embed, self.head, src.shape[0], max_new + 1, memory,
                                  src_pad)
                out = _greedy(lambda out: kv.step(out[:, -1:])[:, -1], src, bos, eos, max_new)
            return out.clone()
        memory = self.encode(src, src_pad)
        return _greedy(lambda out: self.decode(out, memory, src_pad=src_pad)[:, -1], src, bos, eos, max_new)


def _plain(model: nn.Module, cls: type, method: str) -> bool:
    """True when ``model`` computes its logits as ``cls`` does (no subclass changed the stack, head or
    ``method``): only then does the cache spell out the same computation."""
    return (getattr(type(model), method) is getattr(cls, method) and type(getattr(model, "stack", None)
            or model.decoder) is Stack and type(model.head) is nn.Linear)


def _greedy(next_logits, src, bos: int, eos: int, max_new: int) -> torch.Tensor:
    """Greedy loop: ``next_logits(out)`` (B, V) scores the token after ``out`` (B, t); → (B, 1 + n) ids."""
    out = torch.full((src.shape[0], 1), bos, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_new):
        nxt = next_logits(out).argmax(-1)
        out = torch.cat([out, nxt[:, None]], dim=1)
        done |= nxt == eos
        if bool(done.all()):
            break
    return out
