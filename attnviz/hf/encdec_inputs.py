"""Source and target of a Hugging Face encoder–decoder, prepared like attnviz's own ``translate`` model.

The encoder reads the typed text (the model's tokenizer, its special tokens included). The decoder reads
either the text given as the *target* (tokenized as the model's labels, after its decoder start token:
exactly what the model was trained to read) or, without one, the model's own greedy output
(``generate`` with ``do_sample=False, num_beams=1`` and the rest of the model's generation settings).
Decoder position i reads ``tokens[i]`` and produces ``tokens[i + 1]``
(:mod:`attnviz.analysis.decoder_positions`).
"""

from __future__ import annotations

from attnviz.errors import InputError

__all__ = ["prepare_encdec_text", "greedy_output", "target_ids", "decoder_start", "MAX_NEW_TOKENS"]

MAX_NEW_TOKENS = 256  # a random or broken model may never write its end token: the run stays interactive


def decoder_start(model) -> int:
    """The token the decoder starts from (its generation config's, else its config's)."""
    for cfg in (getattr(model, "generation_config", None), model.config):
        start = getattr(cfg, "decoder_start_token_id", None)
        if start is not None:
            return int(start)
    raise InputError(f"{type(model).__name__}: its config names no decoder_start_token_id, so attnviz cannot "
                     "start its decoder")


def _budget(loaded, n_src: int) -> int:
    """New tokens greedy decoding may write: the decoder's positions, and about twice the source (a
    translation or summary rarely needs more; the notice says when the output was cut)."""
    return max(1, min(loaded.config.max_len - 1, max(32, 2 * n_src + 16), MAX_NEW_TOKENS))


def greedy_output(loaded, input_ids) -> tuple[list[int], bool]:
    """The model's own greedy output ([start] y1 … [EOS]) and whether it ended by itself (wrote EOS)."""
    import torch
    import transformers

    from attnviz.hf.loader import quiet_transformers

    model = loaded.model
    budget = _budget(loaded, int(input_ids.shape[1]))
    with torch.no_grad(), quiet_transformers(transformers):  # generate's advice lines stay off the terminal
        out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), do_sample=False,
                             num_beams=1, max_new_tokens=budget)
    seq = [int(i) for i in out[0]]
    eos = getattr(model.generation_config, "eos_token_id", None)
    eos = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
    ended = bool(eos) and any(i in eos for i in seq[1:])
    if ended:  # a batch of one: nothing after the first end token is the model's
        first = next(j for j in range(1, len(seq)) if seq[j] in eos)
        seq = seq[: first + 1]
    return seq, ended


def target_ids(loaded, target: str) -> list[int]:
    """[start] + the target tokenized as the model's labels (its closing special tokens included)."""
    if not str(target).strip():
        raise InputError("the target is empty: type the output the decoder should read, or leave it out to see "
                         "the model's own output")
    hf = loaded.tokenizer.hf
    try:
        ids = list(hf(text_target=str(target), add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
    except (TypeError, ValueError) as exc:
        raise InputError(f"the model's tokenizer cannot read the target: {exc}") from None
    seq = [decoder_start(loaded.model)] + [int(i) for i in ids]
    limit = loaded.config.max_len
    if len(seq) > limit:
        raise InputError(f"the target has {len(seq) - 1} tokens but {loaded.name}'s decoder takes at most "
                         f"{limit - 1}; shorten it")
    return seq


def prepare_encdec_text(loaded, text: str, target: str | None = None, truncate: bool = False):
    """Typed source (and optional target) → ``Prepared`` with ``input_ids``, ``decoder_input_ids``, the
    decoder tokens as positions and the source tokens as ``src_tokens``."""
    import torch

    from attnviz.capture.prepared import Prepared
    from attnviz.hf.inputs import prepare_hf_text

    src = prepare_hf_text(loaded, text, truncate=truncate)
    input_ids = src.inputs["input_ids"]
    meta = dict(src.meta)
    if target is None:
        seq, ended = greedy_output(loaded, input_ids)
        meta["decoder_input"] = "greedy"  # the model's own output
        if not ended:
            meta["notice"] = "; ".join(filter(None, [meta.get("notice"), (
                f"the model's output was cut after {len(seq) - 1} tokens: it wrote no end token")]))
    else:
        seq = target_ids(loaded, target)
        meta["decoder_input"] = "target"
        meta["target_text"] = str(target)
    hf = loaded.tokenizer.hf
    meta["output_text"] = hf.decode(seq, skip_special_tokens=True)
    dec = torch.tensor([seq], device=loaded.device)
    tokens = [str(t) for t in hf.convert_ids_to_tokens(seq)]
    return Prepared({"input_ids": input_ids, "decoder_input_ids": dec}, tokens, list(src.tokens), meta)
