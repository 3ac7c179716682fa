"""Many inputs of one model, in padded batches: the task's fresh held-out data, a text file, or a folder of images.

Each :class:`DatasetBatch` carries the keyword arguments of ``model.forward`` (CPU tensors), for every
attention part the token ids and which query and key positions are real (padding masks), and for
every input what opens it in the app (its text, image path or image array) and its position labels.
Batches are generated one at a time, so scoring ten thousand inputs holds one batch in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnviz.errors import InputError

__all__ = ["DatasetBatch", "PartMasks", "IMAGE_SUFFIXES", "task_batches", "corpus_batches", "image_batches",
           "repeated_batches", "dataset_batches", "dataset_items", "count_corpus_lines", "list_images"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm")


@dataclass
class PartMasks:
    """One attention part of a batch: ids of its query sequence (None for images) and padding masks."""

    ids: np.ndarray | None  # (B, T_q) token ids, for duplicate-token and induction scores
    q_valid: np.ndarray  # (B, T_q) bool
    k_valid: np.ndarray | None = None  # (B, T_k) bool for cross-attention; None: same as q_valid


@dataclass
class DatasetBatch:
    inputs: dict  # keyword arguments of model.forward, CPU tensors
    parts: dict[str, PartMasks]
    items: list  # per input: text (str), image path (str) or image array — what the app opens
    tokens: list[list[str]] = field(default_factory=list)  # per input: labels of the main part's positions

    def __len__(self) -> int:
        return len(self.items)


def _task(loaded):
    from attnviz.runtime.native import task_of

    task = task_of(loaded)
    if task is None:
        raise InputError(f"{loaded.name} has no built-in task to draw held-out inputs from: give a text file "
                         "or a folder of images (attnviz heads --corpus FILE / --images DIR)")
    return task


def _labels(vocab, row, valid) -> list[str]:
    return [vocab[int(i)] for i, ok in zip(row, valid) if ok]


def _from_task_batch(loaded, batch) -> DatasetBatch:
    """A task's Batch (already padded) as a DatasetBatch."""
    import torch

    inputs = dict(batch.inputs)
    tok = loaded.tokenizer
    if "images" in inputs:
        images = inputs["images"]
        B, T = images.shape[0], loaded.config.n_patches + 1
        valid = np.ones((B, T), dtype=bool)
        from attnviz.vision.preprocess import patch_labels

        labels = patch_labels(loaded.config.grid)
        return DatasetBatch(inputs, {"self": PartMasks(None, valid)}, _shown_images(loaded, images),
                            [list(labels)] * B)
    if "src" in inputs:
        tgt_tok = loaded.tgt_tokenizer or tok
        src, tgt = inputs["src"].numpy(), inputs["tgt"].numpy()
        src_valid, tgt_valid = src != tok.pad_id, tgt != tgt_tok.pad_id
        inputs.setdefault("src_pad", torch.from_numpy(~src_valid))
        parts = {"self": PartMasks(tgt, tgt_valid), "cross": PartMasks(None, tgt_valid, src_valid),
                 "enc": PartMasks(src, src_valid)}
        items = [tok.decode(row[ok].tolist()) for row, ok in zip(src, src_valid)]
        return DatasetBatch(inputs, parts, items, [_labels(tgt_tok.vocab, r, v) for r, v in zip(tgt, tgt_valid)])
    ids = inputs["ids"].numpy()
    valid = ids != tok.pad_id
    if loaded.config.kind == "encoder" and not valid.all():
        inputs.setdefault("key_pad", torch.from_numpy(~valid))
    items = [_openable_text(loaded, row[ok].tolist()) for row, ok in zip(ids, valid)]
    return DatasetBatch(inputs, {"self": PartMasks(ids, valid)}, items,
                        [_labels(tok.vocab, r, v) for r, v in zip(ids, valid)])


def _openable_text(loaded, ids: list[int]) -> str:
    """The text that, typed into the app, gives these ids back (special tokens are added by the task)."""
    return loaded.tokenizer.decode(ids)


def _shown_images(loaded, images) -> list[np.ndarray]:
    """Normalised (B, C, H, W) tensors back to uint8 (H, W, C) (or (H, W)) images the app can open."""
    pre = loaded.info.get("preprocess") or {}
    x = images.detach().cpu().numpy().astype(np.float32)
    mean = np.asarray(pre.get("mean", [0.0] * x.shape[1]), np.float32)[None, :, None, None]
    std = np.asarray(pre.get("std", [1.0] * x.shape[1]), np.float32)[None, :, None, None]
    x = np.clip(x * std + mean, 0.0, 1.0).transpose(0, 2, 3, 1)  # (B, H, W, C)
    x = np.round(x * 255).astype(np.uint8)
    return [img[..., 0] if img.shape[-1] == 1 else img for img in x]


def task_batches(loaded, n: int, batch_size: int = 64, seed: int = 0) -> Iterator[DatasetBatch]:
    """``n`` fresh held-out inputs of the model's built-in task (the task's "test" split), batch by batch."""
    task = _task(loaded)
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        b = min(batch_size, n - done)
        yield _from_task_batch(loaded, task.sample_batch("test", b, rng))
        done += b


def _collate(loaded, prepared: list, items: list) -> DatasetBatch:
    """Batches of one (``attnviz.capture.Prepared``) padded into one batch."""
    import torch

    tok = loaded.tokenizer
    tgt_tok = loaded.tgt_tokenizer or tok
    pads = {"ids": (tok.pad_id if tok else 0, "key_pad"), "src": (tok.pad_id if tok else 0, "src_pad"),
            "tgt": (tgt_tok.pad_id if tgt_tok else 0, "tgt_pad")}
    inputs, valid = {}, {}
    for key in prepared[0].inputs:
        rows = [p.inputs[key].detach().cpu() for p in prepared]
        if key in pads:
            T = max(r.shape[1] for r in rows)
            out = torch.full((len(rows), T), pads[key][0], dtype=rows[0].dtype)
            ok = torch.zeros((len(rows), T), dtype=torch.bool)
            for i, r in enumerate(rows):
                out[i, : r.shape[1]] = r[0]
                ok[i, : r.shape[1]] = True
            inputs[key] = out
            valid[key] = ok.numpy()
            if not bool(ok.all()) and (key != "ids" or loaded.config.kind == "encoder"):
                inputs[pads[key][1]] = ~ok
        else:  # pool_index (1,), images (1, C, H, W)
            inputs[key] = torch.cat(rows, 0)
    tokens = [list(p.tokens) for p in prepared]
    if "images" in inputs:
        B, T = inputs["images"].shape[0], len(prepared[0].tokens)
        parts = {"self": PartMasks(None, np.ones((B, T), dtype=bool))}
    elif "src" in inputs:
        parts = {"self": PartMasks(inputs["tgt"].numpy(), valid["tgt"]),
                 "cross": PartMasks(None, valid["tgt"], valid["src"]),
                 "enc": PartMasks(inputs["src"].numpy(), valid["src"])}
    else:
        parts = {"self": PartMasks(inputs["ids"].numpy(), valid["ids"])}
    return DatasetBatch(inputs, parts, list(items), tokens)


def count_corpus_lines(path) -> int:
    """How many non-empty lines ``path`` has (clear one-line errors for a missing or unreadable file)."""
    n = 0
    for _ in _corpus_lines(path):
        n += 1
    if n == 0:
        raise InputError(f"{path} has no text: give one text per line")
    return n


def _corpus_lines(path) -> Iterator[tuple[int, str]]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"corpus file {p} does not exist")
    if p.is_dir():
        raise InputError(f"{p} is a directory: --corpus wants a text file with one text per line")
    try:
        with p.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                text = line.rstrip("\r\n")
                if text.strip():
                    yield number, text
    except UnicodeDecodeError as exc:
        raise InputError(f"{p} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from None


def corpus_batches(loaded, path, n: int | None = None, batch_size: int = 64) -> Iterator[DatasetBatch]:
    """The first ``n`` (default all) non-empty lines of a UTF-8 text file, one input per line.

    Each line is prepared exactly as the app prepares typed text (too-long lines are truncated); a
    line the model cannot read stops with an error naming the line.
    """
    if loaded.config.kind == "vit":
        raise InputError(f"{loaded.name} is a vision model: give it --images DIR, not --corpus")
    done = 0
    for batch in _text_batches(loaded, _corpus_lines(path), n, batch_size, lambda i: f"line {i} of {path}"):
        done += len(batch)
        yield batch
    if done == 0:
        raise InputError(f"{path} has no text: give one text per line")


def _text_batches(loaded, numbered: Iterator[tuple[int, str]], n: int | None, batch_size: int,
                  where) -> Iterator[DatasetBatch]:
    """Texts (numbered for error messages) prepared as the app prepares typed text, in padded batches."""
    from attnviz.runtime.pipeline import prepare_text

    if loaded.config.kind == "vit":
        raise InputError(f"{loaded.name} is a vision model: give it --images DIR, not text")
    prepared, items, done = [], [], 0
    for number, text in numbered:
        if n is not None and done >= n:
            break
        try:
            prepared.append(prepare_text(loaded, text, truncate=True))
        except InputError as exc:
            raise InputError(f"{where(number)}: {exc}") from None
        items.append(text)
        done += 1
        if len(prepared) == batch_size:
            yield _collate(loaded, prepared, items)
            prepared, items = [], []
    if prepared:
        yield _collate(loaded, prepared, items)


def list_images(folder) -> list[Path]:
    """Image files directly in ``folder``, sorted by name (clear errors for a missing or empty folder)."""
    p = Path(folder)
    if not p.is_dir():
        raise InputError(f"image folder {p} does not exist" if not p.exists() else f"{p} is not a folder")
    files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(f"{p} holds no images ({', '.join(IMAGE_SUFFIXES[:4])} …)")
    return files


def image_batches(loaded, folder, n: int | None = None, batch_size: int = 64, on_skip=None) -> Iterator[DatasetBatch]:
    """The images of a folder (first ``n`` by name), preprocessed as the app does.

    ``on_skip(file, message)``, when given, is told of each image too large to open, which is then left
    out (one huge photo in a folder should not cost the whole run); without it such an image stops the run.
    """
    from attnviz.runtime.pipeline import prepare_image
    from attnviz.vision.preprocess import ImageTooLargeError

    if loaded.config.kind != "vit":
        raise InputError(f"{loaded.name} is a text model: give it --corpus FILE, not --images")
    files = list_images(folder)[: n if n is not None else None]
    used = 0
    for start in range(0, len(files), batch_size):
        chunk = files[start : start + batch_size]
        prepared = []
        kept = []
        for f in chunk:
            try:
                prepared.append(prepare_image(loaded, str(f)))
                kept.append(str(f))
            except ImageTooLargeError as exc:
                if on_skip is None:
                    raise InputError(f"{f.name}: {exc}") from None
                on_skip(f, str(exc))
            except InputError as exc:
                raise InputError(f"{f.name}: {exc}") from None
        if prepared:
            used += len(prepared)
            yield _collate(loaded, prepared, kept)
    if not used:
        raise InputError(f"no image in {folder} can be opened: every one is too large")


def repeated_batches(loaded, n: int, batch_size: int = 64, seed: int = 1) -> Iterator[DatasetBatch]:
    """Random token sequences repeated once ("x1 … xn x1 … xn"), prepared as typed text: where an
    induction head shows itself. The first copy's tokens are distinct, so only second-copy queries
    have a previous occurrence."""
    from attnviz.runtime.pipeline import prepare_text
    from attnviz.text.tokenizer import SPECIALS

    tok = loaded.tokenizer
    if tok is None or loaded.config.kind != "decoder":
        return
    if tok.kind == "char":
        pool = [t for t in tok.vocab if t not in SPECIALS and len(t) == 1 and t.isalnum()]
        if tok.lowercase:
            pool = [t for t in pool if t == t.lower()]
        joiner = ""
    else:
        pool = [t for t in tok.vocab if t not in SPECIALS and t.isalpha()]
        joiner = " "
    if len(pool) < 2:
        return
    # room for the model's own prefix (e.g. [BOS]): try the longest half that prepares untruncated
    half = min(len(pool), 32, max(1, (loaded.config.max_len - 1) // 2))
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        b = min(batch_size, n - done)
        prepared, items = [], []
        for _ in range(b):
            seq = [pool[i] for i in rng.permutation(len(pool))[:half]]
            text = joiner.join(seq + seq)
            prepared.append(prepare_text(loaded, text, truncate=True))
            items.append(text)
        yield _collate(loaded, prepared, items)
        done += b


def dataset_batches(loaded, corpus=None, images=None, n: int | None = None, batch_size: int = 64,
                    seed: int = 0, on_skip=None, texts: list[str] | None = None) -> Iterator[DatasetBatch]:
    """The inputs ``attnviz heads`` scores: a corpus file, an image folder, texts given whole (``--text-file``)
    or the task's held-out data."""
    if corpus is not None and images is not None:
        raise InputError("give --corpus or --images, not both")
    if texts is not None:
        return _text_batches(loaded, enumerate(texts, 1), n, batch_size, lambda i: "the text file")
    if corpus is not None:
        return corpus_batches(loaded, corpus, n, batch_size)
    if images is not None:
        return image_batches(loaded, images, n, batch_size, on_skip)
    return task_batches(loaded, 200 if n is None else n, batch_size, seed)


def dataset_items(loaded, corpus=None, images=None, n: int | None = None,
                  texts: list[str] | None = None) -> Iterator:
    """The inputs one by one (texts of a corpus file, texts given whole, or image paths), for models run one
    input at a time."""
    if corpus is not None and images is not None:
        raise InputError("give --corpus or --images, not both")
    if texts is not None:
        if loaded.config.kind == "vit":
            raise InputError(f"{loaded.name} is a vision model: give it --images DIR, not text")
        return iter(texts[: n if n is not None else None])
    if corpus is None and images is None:
        raise InputError(f"{loaded.name} has no built-in task to draw held-out inputs from: give a text file "
                         "or a folder of images (attnviz heads --corpus FILE / --images DIR)")
    if images is not None:
        if loaded.config.kind != "vit":
            raise InputError(f"{loaded.name} is a text model: give it --corpus FILE, not --images")
        files = list_images(images)[: n if n is not None else None]
        return (str(f) for f in files)
    if loaded.config.kind == "vit":
        raise InputError(f"{loaded.name} is a vision model: give it --images DIR, not --corpus")

    def lines():
        for i, (_, text) in enumerate(_corpus_lines(corpus)):
            if n is not None and i >= n:
                return
            yield text

    return lines()
