"""Queries and keys of every token of a data set, for the joint query–key view.

One explicit forward pass per batch records q and k of every layer and head; the real (not padding)
positions are kept with where they came from (input, position, token), and the texts of the inputs
so a point can be shown in its sentence. ``max_tokens`` bounds how many positions are kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from attnviz.errors import InputError

__all__ = ["QKData", "collect_qk", "qk_from_trace", "dataset_qk", "qk_points_table", "DEFAULT_MAX_TOKENS", "VIEW_INPUTS",
           "VIEW_MAX_TOKENS"]

DEFAULT_MAX_TOKENS = 12_000
VIEW_INPUTS = 200  # held-out inputs of the task the query–key view and its exported data use
VIEW_MAX_TOKENS = 5000  # positions kept for them (each gives a query and a key point)
_LAST: list = [None, None]  # (model key, its QKData): one data set kept, guarded by MODEL_LOCK


@dataclass
class QKData:
    """Per part, per layer: q (N, H, dh) and k (N, H_kv, dh) of N positions that are both query and key."""

    q: dict[str, list[np.ndarray]]
    k: dict[str, list[np.ndarray]]
    input_index: dict[str, np.ndarray]  # (N,) which input each position belongs to
    position: dict[str, np.ndarray]  # (N,) its position in that input
    token: dict[str, list[str]]  # (N,) its token label
    items: list = field(default_factory=list)  # what opens input i in the app
    tokens: dict[str, list[list[str]]] = field(default_factory=dict)  # labels of each input's positions
    kv_group: int = 1  # query head h reads key head h // kv_group
    model: str = ""
    joiner: str = " "  # how tokens are joined back into text ("" for characters)

    @property
    def parts(self) -> list[str]:
        return list(self.q)

    def head_vectors(self, part: str, layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
        """(queries (N, dh), keys (N, dh)) of one head."""
        if part not in self.q:
            raise InputError(f"no {part!r} attention in this data (parts: {', '.join(self.q)})")
        L, H = len(self.q[part]), self.q[part][0].shape[1]
        if not (0 <= layer < L and 0 <= head < H):
            raise InputError(f"layer {layer} head {head} is out of range ({L} layers × {H} heads)")
        return self.q[part][layer][:, head], self.k[part][layer][:, head // self.kv_group]

    def context(self, part: str, i: int, width: int = 12) -> str:
        """Point ``i``'s token in its sentence, marked with ⟦ ⟧ (a window of ``width`` tokens each side)."""
        toks = self.tokens[part][int(self.input_index[part][i])]
        p = int(self.position[part][i])
        lo, hi = max(0, p - width), min(len(toks), p + width + 1)
        visible = [t.replace("\n", "↵") for t in toks[lo:hi]]
        shown = [f"⟦{t}⟧" if j == p else t for j, t in enumerate(visible, lo)]
        return ("… " if lo > 0 else "") + self.joiner.join(shown) + (" …" if hi < len(toks) else "")


def collect_qk(loaded, batches: Iterable, max_tokens: int = DEFAULT_MAX_TOKENS) -> QKData:
    """Run the data set and keep every layer's and head's q and k at the real positions.

    Self-attention (and an encoder–decoder's encoder) only: there queries and keys are the same
    positions. Stops after ``max_tokens`` positions of the main part.
    """
    from attnviz.runtime.batch_scores import forward_batch

    qs: dict[str, list[list[np.ndarray]]] = {}
    ks: dict[str, list[list[np.ndarray]]] = {}
    where: dict[str, list[np.ndarray]] = {}
    pos: dict[str, list[np.ndarray]] = {}
    toks: dict[str, list[str]] = {}
    labels: dict[str, list[list[str]]] = {}
    items: list = []
    kept = 0
    vocab = {"self": (loaded.tgt_tokenizer or loaded.tokenizer), "enc": loaded.tokenizer}
    for batch in batches:
        arrays, _ = forward_batch(loaded, batch.inputs, keep=("q", "k"))
        base = len(items)
        for part in ("self", "enc"):
            if part not in arrays:
                continue
            masks = batch.parts[part]
            b_idx, t_idx = np.nonzero(masks.q_valid)  # real positions, input by input
            qs.setdefault(part, [[] for _ in arrays[part]["q"]])
            ks.setdefault(part, [[] for _ in arrays[part]["k"]])
            for layer, (q, k) in enumerate(zip(arrays[part]["q"], arrays[part]["k"])):
                qs[part][layer].append(q[b_idx, :, t_idx])  # (n, H, dh)
                ks[part][layer].append(k[b_idx, :, t_idx])  # (n, H_kv, dh)
            where.setdefault(part, []).append(base + b_idx)
            pos.setdefault(part, []).append(t_idx)
            if part == "self" and batch.tokens:
                per_input = [list(t) for t in batch.tokens]
            elif masks.ids is not None and vocab[part] is not None:
                per_input = [[vocab[part].vocab[int(i)] for i in row[ok]] for row, ok in zip(masks.ids, masks.q_valid)]
            else:
                per_input = [[str(j) for j in range(int(ok.sum()))] for ok in masks.q_valid]
            labels.setdefault(part, []).extend(per_input)
            toks.setdefault(part, []).extend(per_input[b][t] for b, t in zip(b_idx, t_idx))
        items.extend(batch.items)
        kept += int(batch.parts["self"].q_valid.sum())
        if kept >= max_tokens:
            break
    if not items:
        raise InputError("no inputs to collect queries and keys from")
    group = loaded.config.n_heads // loaded.config.kv_heads
    return QKData(q={p: [np.concatenate(v) for v in layers] for p, layers in qs.items()},
                  k={p: [np.concatenate(v) for v in layers] for p, layers in ks.items()},
                  input_index={p: np.concatenate(v) for p, v in where.items()},
                  position={p: np.concatenate(v) for p, v in pos.items()},
                  token=toks, items=items, tokens=labels, kv_group=group, model=loaded.name,
                  joiner="" if getattr(loaded.tokenizer, "kind", "") == "char" else " ")


def dataset_qk(ref: str, n: int = VIEW_INPUTS, max_tokens: int = VIEW_MAX_TOKENS) -> QKData:
    """q and k of ``n`` held-out inputs of the model ``ref`` (a private copy), kept for the next call
    with the same model (another head, an export of every head, the exported numbers)."""
    from attnviz.runtime.dataset_inputs import dataset_batches
    from attnviz.runtime.model_copies import MODEL_LOCK, model_stamp, private_model

    with MODEL_LOCK:
        key = (ref, model_stamp(ref), n, max_tokens)
        if _LAST[0] == key:
            return _LAST[1]
        loaded = private_model(ref)
        data = collect_qk(loaded, dataset_batches(loaded, n=n, batch_size=16), max_tokens=max_tokens)
        _LAST[:] = [key, data]
        return data


def qk_points_table(ref: str, layer: int, head: int, part: str = "self", method: str = "pca"):
    """The points of the query–key figure as a table: (values (2N, 5), row labels, column labels).

    Columns: x, y, is_query (1 query, 0 key), position, input (index in the data set); rows are
    labelled "query 'tok'" / "key 'tok'". Queries come first.
    """
    from attnviz.analysis.qk_embedding import embed_qk

    data = dataset_qk(ref)
    part = part if part in data.parts else "self"
    q, k = data.head_vectors(part, layer, head)
    emb = embed_qk(q, k, method=method)
    n = emb.n_queries
    pos, inp = data.position[part], data.input_index[part]
    values = np.column_stack([emb.points, np.r_[np.ones(n), np.zeros(n)], np.r_[pos, pos], np.r_[inp, inp]])
    rows = [f"{kind} {t!r}" for kind in ("query", "key") for t in data.token[part]]
    return values, rows, ["x", "y", "is_query", "position", "input"]


def qk_from_trace(trace) -> QKData:
    """The queries and keys of one captured input (no model needed), as a one-input QKData."""
    from attnviz.capture.trace import layer_prefix

    qs, ks, where, pos, toks, labels = {}, {}, {}, {}, {}, {}
    for part in ("self", "enc"):
        if part not in trace.parts or layer_prefix(0, part) + "q" not in trace:
            continue
        qs[part] = [np.asarray(trace[layer_prefix(i, part) + "q"], np.float32).transpose(1, 0, 2)  # (T, H, dh)
                    for i in range(trace.layers_in(part))]
        ks[part] = [np.asarray(trace[layer_prefix(i, part) + "k"], np.float32).transpose(1, 0, 2)  # (T, H_kv, dh)
                    for i in range(trace.layers_in(part))]
        tokens = list(trace.query_tokens(part))
        where[part], pos[part] = np.zeros(len(tokens), dtype=int), np.arange(len(tokens))
        toks[part], labels[part] = tokens, [tokens]
    if not qs:
        raise InputError("this trace holds no queries and keys")
    described = trace.description
    item = described.input_text or "the current input"
    return QKData(q=qs, k=ks, input_index=where, position=pos, token=toks, items=[item], tokens=labels,
                  kv_group=described.kv_group, model=described.model_name or "",
                  joiner="" if all(len(t) <= 1 for t in toks.get("self", [])) else " ")
