"""What a trace is: its arrays' names and the typed description of the run (the one place both are documented).

Arrays (``Trace[key]``, plain NumPy; layers numbered from 0; H query heads, H_kv key/value heads, query head h
reads key/value head h // kv_group; a part prefix ``L{i}.`` is a decoder's or single stack's self-attention,
``L{i}.cross.`` a decoder's cross-attention over (T_dec, T_enc), ``enc.L{i}.`` an encoder–decoder's encoder):

==============================  ======================  ==================================================
key                             shape                   what
==============================  ======================  ==================================================
``tokens``                      (T,)                    position labels (decoder tokens of enc–dec models;
                                                        ``[CLS]``, ``r,c`` for image patches)
``meta``                        JSON text               the description below, under the fields' names
``src_tokens``                  (T_enc,)                encoder tokens of an encoder–decoder
``L{i}.x``                      (T, D)                  input to the Q/K/V projections (after the norm in
                                                        pre-norm models), so ``q = x W_q + b_q``
``L{i}.q``                      (H, T, dh)              queries (after rotation in rotary models)
``L{i}.k`` / ``L{i}.v``         (H_kv, T, dh)           keys, values
``L{i}.logits``                 (H, T, T)               q·kᵀ·scale before the mask (soft-capped models:
                                                        c·tanh(q·kᵀ·scale / c)); never stored: recomputed
                                                        from q, k when asked (old files' copies are read)
``L{i}.mask``                   (T, T)                  additive mask: 0 or −inf
``L{i}.bias``                   (H or 1, T, T)          an additive position bias inside the model's scores
``L{i}.probs``                  (H, T, T)               softmax(logits + bias + mask); rows sum to 1
``L{i}.q_pre_rope`` …           (H, T, dh), (T, d_rot)  rotary models: q and k before rotation
                                                        (``k_pre_rope``) and the model's ``rope_cos``/``sin``
``L{i}.z``                      (H, T, dh)              probs · v per head
``L{i}.out``                    (T, D)                  concat(z) · W_O + b_O (recomputed when not stored:
                                                        long inputs, layers on demand)
``L{i}.W_q`` … ``L{i}.b_o``     (D, H·dh) …             the weights in ``x W + b`` orientation: read-only
                                                        views of the loaded model's parameters, shared by
                                                        its traces (attnviz.capture.weights)
``L{i}.h``                      (T, D)                  residual stream after the attention sub-layer
``L{i}.resid``                  (T, D)                  residual stream after block i
``L{i}.grad``                   (H, T, T)               d(target logit)/d(probs), captured with ``grad``
``L{i}.head_gate``              (H,)                    heads ablated (what-if lab):
                                                        out = concat(gate_h·z_h)·W_O + b
``L{i}.cross.*``                (T_dec, T_enc) …        decoder cross-attention, the same names
``L{i}.cross.x_kv``             (T_enc, D)              encoder output the cross keys and values come from
``enc.L{i}.*``, ``enc.emb.*``                           encoder layers and embeddings of an enc–dec
``L{i}.lse``, ``L{i}.score_*``  (H, T), …               layers on demand: each row's log-sum-exp and the
                                                        score rule's arrays (``on_demand`` below)
``emb.token/pos/sum``           (T, D)                  token (patch) embedding, positions, their sum
``emb.pos_table``               (max_len, D)            the model's whole positional table (float32)
``emb.patch_weight``            (D, C, P, P)            ViT patch-embedding filters
``image``                       (S, S, C)               the preprocessed image in [0, 1]
``prediction``                  (C,) or (T, C)          class probabilities or next-token distribution
``next_probs``                  (T, V)                  enc–dec: next-token distribution after every
                                                        decoder position (position i produced tokens[i+1])
``rollout``                     (T, T)                  attention rollout with default settings
==============================  ======================  ==================================================

The description (:class:`TraceDescription`, ``trace.description``) is the trace's ``meta`` read once, typed and
validated; ``meta`` stays the JSON dict a saved file holds, under the same key names as its fields (listed
with their meaning in ``help(TraceDescription)``).
Every capture (attnviz's own models, Hugging Face decoders/encoders, encoder–decoders, given attentions) builds
one and hands it with its arrays to :func:`attnviz.capture.finish.finish_trace`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from attnviz.capture.compute_dtype import COMPUTE_DTYPES
from attnviz.errors import InputError

__all__ = ["TraceDescription", "KINDS", "PRECISIONS", "MAX_META_KEYS"]

KINDS = ("encoder", "decoder", "encoder-decoder", "vit", "snapshot")
PRECISIONS = ("float32", "float16")
# a saved trace's meta is a shared file's content: this many top-level keys at most (attnviz writes ~30)
MAX_META_KEYS = 256


def _fact(what: str, default=None):
    return field(default=default, metadata={"what": what})


@dataclass(frozen=True)
class TraceDescription:
    """The typed description of one captured run (``Trace.meta`` under the same names; None: not stated).

    The first group is what a capture states about the model and its attention as the run computed them;
    the second is what the run was asked (filled by the runtime, tasks and tools that make or change traces).
    """

    # -- what the capture computed -------------------------------------------------------------------------
    kind: str = _fact("encoder, decoder, encoder-decoder, vit (or snapshot: a training snapshot)", "encoder")
    n_layers: int = _fact("layers of the decoder (or only) stack", 0)
    n_heads: int = _fact("query heads H per layer", 1)
    n_enc_layers: int = _fact("encoder layers of an encoder–decoder, else 0", 0)
    n_kv_heads: int | None = _fact("key/value heads H_kv (H_kv < H: grouped-query or multi-query attention)")
    d_head: int | None = _fact("size of one head's q, k, v")
    scale: float | None = _fact("the factor on q·kᵀ (the first layer's when layers differ)")
    layer_scales: tuple[float, ...] | None = _fact("the factor per layer, when layers scale differently")
    softcap: float | tuple | None = _fact("soft-cap c: logits = c·tanh(q·kᵀ·scale / c); per layer as a list")
    sliding_window: tuple | None = _fact("each layer's sliding window (None: global)")
    causal: bool | None = _fact("queries see only earlier keys")
    grid: tuple[int, int] | None = _fact("rows × columns of image patches (vit)")
    precision: str | None = _fact("dtype of the stored arrays: float32 or float16")
    compute_dtype: str | None = _fact("the dtype the model's weights ran in (float32, float16, bfloat16): "
                                      "probabilities come in its precision (attnviz.capture.compute_dtype)")
    config: dict = field(default_factory=dict, metadata={
        "what": "the model's configuration (ModelConfig.to_dict, with its real activation and norm names)"})
    source: str | None = _fact("None: attnviz's own model; huggingface, attentions or transformerlens")
    hf_architecture: str | None = _fact("the Hugging Face architecture class name")
    hf_family: str | None = _fact("the Hugging Face family (model_type)")
    prefix_tokens: int | None = _fact("positions before the input proper ([CLS], registers)")
    emb_sum: str | None = _fact("what ``emb.sum`` holds in this model")
    qkv_available: bool | None = _fact("False: some layers keep probabilities only (see ``missing``)")
    position: str | None = _fact("kind of position information: learned, sinusoidal, rotary, alibi, relative…")
    rotary: dict | None = _fact("rotary embedding: dims, d_head, theta, convention")
    qk_norm: bool | None = _fact("q and k are normalised per head before the scores")
    additive_bias: bool | None = _fact("the model adds a bias to the scores (``*.bias`` or a rule's table)")
    missing: tuple[str, ...] = _fact("parts the capture could not read, one phrase each", ())
    on_demand: dict | None = _fact("prefix → score-rule facts of layers whose probabilities are recomputed")
    recomputed: dict | None = _fact("array name → the exact rule that rebuilds it from kept arrays when read "
                                    "(long captures: :mod:`attnviz.capture.recomputed`)")
    nonfinite: tuple[str, ...] | None = _fact("arrays holding NaN or ±inf")
    nonfinite_weight: str | None = _fact("the model weight that is not finite")
    notice: str | None = _fact("one line for the user: what is unusual about this trace")
    # -- what the run was asked --------------------------------------------------------------------------
    task: str | None = _fact("the bundled task of the model (masked_lm, coref, translate …)")
    model_name: str | None = _fact("what the figures call the model")
    model_path: str | None = _fact("the model's folder")
    input_text: str | None = _fact("the input as typed")
    labels: list | None = _fact("names of the prediction's classes (a vocabulary)")
    metrics: dict | None = _fact("the model's stored evaluation figures")
    query_index: int | None = _fact("the position the task asks about (the [MASK], the pronoun)")
    focus: dict | None = _fact("the task's chosen layer/head/query for the first view")
    decoder_input: str | None = _fact("enc–dec: greedy (the model's output) or target (typed)")
    target_text: str | None = _fact("enc–dec: the typed target")
    output_text: str | None = _fact("enc–dec: what the decoder input decodes to")
    expected_text: str | None = _fact("the task's expected output")
    reference_text: str | None = _fact("the reference translation")
    alignment: list | None = _fact("source–target word pairs of the reference")
    correct: bool | None = _fact("output equals the expected/reference output")
    whatif: str | None = _fact("the what-if lab's switches this run had on, as a caption")
    compare: dict | None = _fact("a compared pair: labels and the other input's tokens")
    weights_sha256: str | None = _fact("digest of the weights an opening trace was made with")
    opening_text: str | None = _fact("the opening example this trace was made for")
    step: int | None = _fact("training step of a snapshot")
    format: int | None = _fact("file format version (written by Trace.save)")

    # -- derived facts -------------------------------------------------------------------------------------
    @property
    def kv_heads(self) -> int:
        """H_kv, H when the trace does not say."""
        return self.n_kv_heads or self.n_heads

    @property
    def kv_group(self) -> int:
        """Query heads per key/value head: query head h reads key/value head h // kv_group."""
        return max(1, self.n_heads // self.kv_heads)

    @property
    def parts(self) -> tuple[str, ...]:
        """The attention parts: ("self",), or the encoder's too (and cross-attention) for encoder–decoders."""
        return ("enc", "cross", "self") if self.n_enc_layers else ("self",)

    @property
    def norm_type(self) -> str:
        """"rmsnorm" or "layernorm" (what the model's config states; LayerNorm when it does not)."""
        return str(self.config.get("norm_type", "layernorm")).lower()

    @property
    def norm_placement(self) -> str:
        """"pre" (normalised before attention) or "post"."""
        return str(self.config.get("norm", "pre"))

    @property
    def activation(self) -> str:
        return str(self.config.get("activation", "gelu"))

    @property
    def position_kind(self) -> str:
        """The position information's kind (Hugging Face traces state it; attnviz's own in the config)."""
        return str(self.position or self.config.get("pos") or "")

    @property
    def has_qkv(self) -> bool:
        return self.qkv_available is not False

    def layer_scale(self, layer: int) -> float | None:
        if self.layer_scales and 0 <= layer < len(self.layer_scales):
            return self.layer_scales[layer]
        return self.scale

    # -- to and from the meta dict -------------------------------------------------------------------------
    def to_meta(self) -> dict:
        """The JSON dict of a trace's ``meta``: every stated field under its name (None, an empty config and nothing
        missing left out), and ``kv_group`` beside the head counts (files read before the description use it)."""
        out: dict = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name in ("missing", "config") and not value):
                continue
            out[f.name] = _json(value)
        if "n_kv_heads" in out:
            out["kv_group"] = self.kv_group
        out.setdefault("grid", None)  # every capture has always said "no grid" in so many words
        return out

    @classmethod
    def from_meta(cls, meta: dict, where: str = "the trace", saved: bool = False) -> "TraceDescription":
        """Read and check a meta dict: one-line :class:`InputError` naming the key when a known key has the wrong
        type or an impossible value; unknown keys are left to ``meta``. ``saved``: a file's (untrusted), which
        must also state the layer and head counts."""
        if not isinstance(meta, dict):
            raise InputError(f"{where}: its meta is not a JSON object")
        if len(meta) > MAX_META_KEYS:
            raise InputError(f"{where}: its meta has {len(meta)} keys (at most {MAX_META_KEYS})")
        lacking = [k for k in ("n_layers", "n_heads") if saved and meta.get(k) is None]
        if lacking:
            raise InputError(f"{where}: its meta does not state {' or '.join(lacking)}")
        values = {}
        for f in _FIELDS:
            if f.name in meta and meta[f.name] is not None:
                values[f.name] = _CHECKS[f.name](meta[f.name], f.name, where)
        desc = cls(**values)
        desc._check(meta, where)
        return desc

    def _check(self, meta: dict, where: str) -> None:
        if self.kind not in KINDS:
            raise InputError(f"{where}: unknown kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.precision is not None and self.precision not in PRECISIONS:
            raise InputError(f"{where}: unknown precision {self.precision!r}")
        if self.compute_dtype is not None and self.compute_dtype not in COMPUTE_DTYPES:
            raise InputError(f"{where}: unknown compute_dtype {self.compute_dtype!r}")
        if self.n_heads < 1 or self.n_kv_heads is not None and (self.n_kv_heads < 1 or self.n_heads % self.n_kv_heads):
            raise InputError(f"{where}: {self.n_heads} query heads cannot share {self.n_kv_heads} key/value heads")
        group = meta.get("kv_group")
        if group is not None and (not isinstance(group, int) or isinstance(group, bool) or group < 1):
            raise InputError(f"{where}: kv_group must be a positive whole number, not {group!r}")
        if self.grid is not None and (len(self.grid) != 2 or min(self.grid) < 1):
            raise InputError(f"{where}: grid must be two positive whole numbers, not {list(self.grid)}")
        if self.layer_scales is not None and len(self.layer_scales) != self.n_layers:
            raise InputError(f"{where}: layer_scales has {len(self.layer_scales)} entries for {self.n_layers} layers")


def _json(value):
    """Tuples (typed fields) back to the lists JSON holds."""
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value


def _bad(name: str, where: str, wanted: str, value) -> InputError:
    shown = repr(value)
    return InputError(f"{where}: meta {name!r} must be {wanted}, not {shown[:60]}{'…' if len(shown) > 60 else ''}")


def _int(low: int = 0):
    def check(value, name, where):
        if isinstance(value, bool) or not isinstance(value, int) or value < low or value > 1 << 31:
            raise _bad(name, where, f"a whole number ≥ {low}", value)
        return value
    return check


def _float(value, name, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        raise _bad(name, where, "a finite number", value)
    return float(value)


def _str(value, name, where):
    if not isinstance(value, str):
        raise _bad(name, where, "text", value)
    return value


def _bool(value, name, where):
    if not isinstance(value, bool):
        raise _bad(name, where, "true or false", value)
    return value


def _of(kind, wanted: str):
    def check(value, name, where):
        if not isinstance(value, kind):
            raise _bad(name, where, wanted, value)
        return value
    return check


def _strs(value, name, where):
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _bad(name, where, "a list of text", value)
    return tuple(value)


def _ints(length: int):
    def check(value, name, where):
        if not isinstance(value, list) or len(value) != length or any(isinstance(v, bool) or not isinstance(v, int)
                                                                      for v in value):
            raise _bad(name, where, f"{length} whole numbers", value)
        return tuple(value)
    return check


def _floats(value, name, where):
    if not isinstance(value, list):
        raise _bad(name, where, "a list of numbers", value)
    return tuple(_float(v, name, where) for v in value)


def _float_or_floats(value, name, where):
    """One value for every layer, or a list per layer (None: no cap in that layer)."""
    if isinstance(value, list):
        return tuple(None if v is None else _float(v, name, where) for v in value)
    return _float(value, name, where)


def _windows(value, name, where):
    if not isinstance(value, list) or any(v is not None and (isinstance(v, bool) or not isinstance(v, int))
                                          for v in value):
        raise _bad(name, where, "a list of whole numbers or nulls", value)
    return tuple(value)


_CHECKS = {
    "kind": _str, "n_layers": _int(), "n_heads": _int(1), "n_enc_layers": _int(), "n_kv_heads": _int(1),
    "d_head": _int(1), "scale": _float, "layer_scales": _floats, "softcap": _float_or_floats,
    "sliding_window": _windows, "causal": _bool, "grid": _ints(2), "precision": _str, "compute_dtype": _str,
    "config": _of(dict, "an object"), "source": _str, "hf_architecture": _str, "hf_family": _str,
    "prefix_tokens": _int(), "emb_sum": _str, "qkv_available": _bool, "position": _str,
    "rotary": _of(dict, "an object"), "qk_norm": _bool, "additive_bias": _bool, "missing": _strs,
    "on_demand": _of(dict, "an object"), "recomputed": _of(dict, "an object"), "nonfinite": _strs, "nonfinite_weight": _str, "notice": _str,
    "task": _str, "model_name": _str, "model_path": _str, "input_text": _str, "labels": _of((list, tuple), "a list"),
    "metrics": _of(dict, "an object"), "query_index": _int(), "focus": _of(dict, "an object"),
    "decoder_input": _str, "target_text": _str, "output_text": _str, "expected_text": _str,
    "reference_text": _str, "alignment": _of((list, tuple), "a list"), "correct": _bool, "whatif": _str,
    "compare": _of(dict, "an object"), "weights_sha256": _str, "opening_text": _str, "step": _int(),
    "format": _int(),
}
_FIELDS = dataclasses.fields(TraceDescription)  # every one has its check (tests/capture/test_description.py)
# the fields' meanings, written once beside the fields, listed in the class's help
if TraceDescription.__doc__:  # None under python -OO
    TraceDescription.__doc__ += "\n    Fields\n    ------\n" + "".join(
        f"    {f.name} : {f.metadata['what']}\n" for f in _FIELDS)
