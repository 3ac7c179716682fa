"""attnviz's own checkpoints: ``models/`` builds and loads the weights, each task declares its input rules."""

from __future__ import annotations

from pathlib import Path

from attnviz.capture.prepared import Prepared
from attnviz.errors import InputError, ModelLoadError
from attnviz.runtime.adapter import CaptureOptions
from attnviz.runtime.describe import describe_loaded, refuse_target

__all__ = ["NativeAdapter", "task_of"]


def task_of(loaded):
    """The built-in task a model was trained on (cached on the LoadedModel), or None."""
    if "task_obj" not in loaded.extra:
        from attnviz.tasks import TASKS, get_task

        name = loaded.task
        loaded.extra["task_obj"] = get_task(name) if name in TASKS else None
    return loaded.extra["task_obj"]


class NativeAdapter:
    """Folders written by :func:`attnviz.models.checkpoint.save_checkpoint` (``config.json`` + safetensors)."""

    name = "attnviz"
    batched = True

    def can_load(self, path: Path) -> bool:
        return (Path(path) / "config.json").is_file()

    def owns(self, loaded) -> bool:
        return loaded.info.get("source", "attnviz") == "attnviz"

    def load(self, path: Path, device=None, allow_pickle: bool = False, dtype: str = "auto"):
        from attnviz.models.checkpoint import load_checkpoint

        if dtype not in ("auto", "float32"):  # attnviz's own checkpoints are float32 models
            raise ModelLoadError(f"attnviz's own models run in float32 (asked: {dtype})")
        from attnviz.tasks import task_kind

        return load_checkpoint(path, device=device, allow_pickle=allow_pickle, task_kind=task_kind)

    def describe(self, loaded) -> dict:
        return describe_loaded(loaded, self.name)

    # -- inputs --------------------------------------------------------------------------------
    def prepare_text(self, loaded, text: str, truncate: bool = False, target_text: str | None = None) -> Prepared:
        """Tokenize ``text`` by the task's rules (or the tokenizer's plain reading) into model inputs;
        ``target_text`` (encoder–decoders) is what the decoder reads instead of its own greedy output."""
        from attnviz.tasks.base import TextInput  # tasks import torch: not at start-up
        from attnviz.text.fit import fit_tokens

        cfg = loaded.config
        refuse_target(loaded, target_text)
        if cfg.kind == "vit":
            raise InputError(f"{loaded.name} is a vision model: give it an image, not text")
        if text is None or not str(text).strip():
            raise InputError("the text is empty: type a sentence")
        task = task_of(loaded)
        read = task.read_text(loaded.tokenizer, str(text), cfg.max_len, truncate) if task is not None else None
        if read is None:
            if loaded.tokenizer is None:
                raise InputError(f"{loaded.name} has no tokenizer: it cannot read text")
            enc = loaded.tokenizer.encode(text)
            ids, tokens, notice = fit_tokens(enc.ids, enc.tokens, cfg.max_len, truncate, "the text")
            notice = "; ".join(filter(None, [getattr(enc, "notice", None), notice]))  # read as [UNK] or left out
            read = TextInput(tokens, ids, meta={"notice": notice} if notice else {},
                             seq2seq=cfg.kind == "encoder-decoder")
        focus = task.focus(loaded.info) if task is not None else None
        if focus is not None:  # the head the task names: the app and exports open on it
            read.meta["focus"] = {**focus, "query": read.meta.get("query_index")}
        if read.seq2seq:
            return self._translate(loaded, read, task, target_text)
        import torch

        inputs = {"ids": torch.tensor([read.ids], device=loaded.device)}
        inputs.update({k: torch.tensor(v, device=loaded.device) for k, v in read.extras.items()})
        return Prepared(inputs, list(read.tokens), meta=dict(read.meta))

    def _translate(self, loaded, source, task, target_text: str | None = None) -> Prepared:
        """Encoder–decoder input: translate the source greedily (or take ``target_text``), then trace the
        decoder over that output.

        Positions are the decoder's tokens "[BOS] y1 … [EOS]"; the source tokens label the encoder positions.
        """
        import torch

        tgt_tok = loaded.tgt_tokenizer or loaded.tokenizer
        src = torch.tensor([source.ids], device=loaded.device)
        bos, eos = tgt_tok.id_of("[BOS]"), tgt_tok.id_of("[EOS]")
        if target_text is None:
            out = loaded.model.generate(src, bos=bos, eos=eos, max_new=loaded.config.max_len - 1)[0].tolist()
            meta = {**source.meta, "decoder_input": "greedy"}
        else:
            out, meta = self._target(loaded, tgt_tok, target_text, bos, eos), dict(source.meta)
            meta.update(decoder_input="target", target_text=str(target_text))
        meta["output_text"] = tgt_tok.decode(out)
        if task is not None and target_text is None:  # the reference check judges the model's own output
            task.describe_output(source, meta)
        return Prepared({"src": src, "tgt": torch.tensor([out], device=loaded.device)},
                        [tgt_tok.vocab[i] for i in out], list(source.tokens), meta)

    @staticmethod
    def _target(loaded, tgt_tok, target_text: str, bos: int, eos: int) -> list[int]:
        """[BOS] + the target's tokens + [EOS], as the decoder was trained to read an output."""
        if not str(target_text).strip():
            raise InputError("the target is empty: type the output the decoder should read, or leave it out "
                             "to see the model's own output")
        enc = tgt_tok.encode(str(target_text), specials=False)
        if enc.unknown:
            raise InputError(f"the target has words the decoder does not know: {enc.notice}")
        out = [bos, *enc.ids, eos]
        if len(out) > loaded.config.max_len:
            raise InputError(f"the target has {len(enc.ids)} tokens but {loaded.name}'s decoder takes at most "
                             f"{loaded.config.max_len - 2}; shorten it")
        return out

    def prepare_image(self, loaded, image) -> Prepared:
        from attnviz.vision.preprocess import patch_labels, preprocess_image

        cfg = loaded.config
        if cfg.kind != "vit":
            raise InputError(f"{loaded.name} is a text model: give it text, not an image")
        tensor, shown = preprocess_image(image, cfg, loaded.info.get("preprocess"))
        return Prepared({"images": tensor.to(loaded.device)}, patch_labels(cfg.grid), image=shown)

    # -- run -----------------------------------------------------------------------------------
    def keeps_some_layers(self, loaded) -> bool:
        """attnviz's own models are small: every layer is kept in full."""
        return False

    def capture(self, loaded, prepared: Prepared, meta: dict, options: CaptureOptions = CaptureOptions()):
        from attnviz.capture.record import capture

        # no preview: the whole forward of a bundled model takes a few milliseconds
        return capture(loaded.model, prepared.inputs, prepared.tokens, meta=meta, grad=options.grad,
                       target=options.target, precision=options.precision)
