"""Load a Hugging Face model folder — local files only, eager attention — as an attnviz :class:`LoadedModel`.

``config.json`` + ``model.safetensors`` (or a sharded index) + tokenizer / image-processor files.
Nothing is downloaded: every ``from_pretrained`` call (config, weights, tokenizer, image processor) passes
``local_files_only=True``; no process-wide setting is changed (``HF_HUB_OFFLINE`` is left to the user).
Pickled weights (``pytorch_model.bin``) are refused unless the caller allows the restricted unpickler (``torch.load(weights_only=True)``).
Every problem the user can fix is a :class:`~attnviz.errors.ModelLoadError` with one clear line.
"""

from __future__ import annotations

import math
import os
from contextlib import contextmanager
from pathlib import Path

from attnviz.errors import ModelLoadError
from attnviz.hf.detect import HFFolder, detect_hf_folder
from attnviz.hf.describe import describe_model, head_of, positions_of
from attnviz.hf.encdec_model import describe_encdec, encdec_positions, encdec_class, is_encoder_decoder
from attnviz.hf.private_names import model_class_for, records_attentions
from attnviz.models.validate import available_memory  # one reading of free memory for every loader

__all__ = ["load_hf_model", "require_transformers", "quiet_transformers", "weights_numel", "available_memory",
           "INSTALL_HINT", "MIN_TRANSFORMERS"]

INSTALL_HINT = "pip install 'attnviz[hf]'"
MIN_TRANSFORMERS = 5  # module paths in attnviz.hf.families follow transformers 5
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "tokenizer.model",
                    "sentencepiece.bpe.model")


def require_transformers(what: str = "this Hugging Face model folder"):
    """Import transformers (nothing in the process's environment is changed), or say how to install it."""
    try:
        import transformers
    except ImportError:
        raise ModelLoadError(f"opening {what} needs the optional transformers package: {INSTALL_HINT}") from None
    major = int(str(transformers.__version__).split(".")[0])
    if major < MIN_TRANSFORMERS:
        raise ModelLoadError(f"attnviz needs transformers {MIN_TRANSFORMERS} or newer (found "
                             f"{transformers.__version__}): pip install -U 'attnviz[hf]'")
    return transformers


@contextmanager
def quiet_transformers(tf):
    """Silence transformers' log reports and progress bars for the block (restored afterwards): they
    would land on the terminal, and the loader's own checks say the same in one line."""
    logging = tf.utils.logging
    level, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(level)
        if bars:
            logging.enable_progress_bar()


# -- files -------------------------------------------------------------------------------------------
MAX_INDEX_BYTES = 32 * 2**20  # a shard index names ~100 bytes per tensor: 32 MB is 300 000 tensors
MAX_SHARDS = 10_000


def _shards(folder: HFFolder, st: Path | None = None) -> list[Path]:
    """The weight files: the one weights file, or the shards its index names (each inside the folder).

    ``st``: the weights file or index (default: the folder's safetensors one); a pickle's index is read the
    same way before transformers reads it."""
    st = folder.safetensors if st is None else st
    if not st.name.endswith(".index.json"):
        return [st]
    from attnviz.models.validate import read_json_bounded

    # the one bounded reader: a 200 MB or deeply nested index is one line, not memory or a RecursionError
    doc = read_json_bounded(st, MAX_INDEX_BYTES, 8)
    weight_map = doc.get("weight_map") if isinstance(doc, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ModelLoadError(f"cannot read the shard index {st}: it has no \"weight_map\" object")
    for name in weight_map.values():
        if not isinstance(name, str) or not name or "\x00" in name:
            raise ModelLoadError(f"the shard index {st} names a shard that is not a file name: {str(name)[:60]!r}")
    names = list(dict.fromkeys(weight_map.values()))
    if len(names) > MAX_SHARDS:
        raise ModelLoadError(f"the shard index {st} names {len(names):,} shards, more than {MAX_SHARDS:,}")
    root = Path(os.path.realpath(folder.path))
    files = []
    for name in names:
        file = folder.path / name
        # judged before anything is opened: a shard is a file of this folder, never ../../etc/passwd
        if Path(name).is_absolute() or ".." in Path(name).parts or root not in Path(os.path.realpath(file)).parents:
            raise ModelLoadError(f"the shard index {st} names {name[:80]!r}, outside the model folder")
        files.append(file)
    absent = [f.name for f in files if not f.is_file()]
    if absent:
        raise ModelLoadError(f"{folder.path} is missing weight shards: {', '.join(absent[:3])}")
    return files


def _safetensors_numel(file: Path) -> int:
    """Parameters in one safetensors file, from its header (bounded, every entry checked; a truncated file
    is caught here)."""
    from attnviz.models.validate import read_safetensors_header

    return sum(math.prod(shape) for _dtype, shape in read_safetensors_header(file).values())


def weights_numel(folder: HFFolder) -> int:
    """Parameters stored in the folder's safetensors weights (pickles: estimated from the file size)."""
    if folder.safetensors is not None:
        return sum(_safetensors_numel(f) for f in _shards(folder))
    return folder.pickle.stat().st_size // 4


def _check_files(folder: HFFolder, allow_pickle: bool) -> None:
    if folder.doc.get("auto_map"):
        raise ModelLoadError(f"{folder.path.name} needs its own Python code (auto_map / trust_remote_code), "
                             "which attnviz never runs")
    if folder.safetensors is not None:
        return
    if folder.pickle is not None:
        if not allow_pickle:
            raise ModelLoadError(
                f"{folder.pickle.name} is a pickle, which can run code when loaded; attnviz refuses it. "
                "Convert it to model.safetensors, or allow the restricted loader (weights_only) explicitly.")
        _shards(folder, folder.pickle)  # its index bounded and its shards inside the folder, as for safetensors
        return
    if folder.other_weights:
        raise ModelLoadError(f"{folder.path} holds only {', '.join(folder.other_weights)} (TensorFlow/Flax "
                             "weights); attnviz reads PyTorch weights in model.safetensors")
    raise ModelLoadError(f"{folder.path} has config.json but no model.safetensors (the weights are missing)")


def param_bytes(doc: dict, dtype: str = "auto") -> int:
    """Bytes a parameter takes in the dtype the model will run in (:func:`model_dtype`'s rule on config.json's
    own ``dtype`` / ``torch_dtype``): 2 for float16 and bfloat16, else 4."""
    name = dtype if dtype != "auto" else (doc.get("dtype") or doc.get("torch_dtype"))
    return 2 if name in ("float16", "bfloat16") else 4


def _check_memory(folder: HFFolder, config_numel: int = 0, file_numel: int | None = None,
                  bytes_per_param: int = 4) -> None:
    # weights in the dtype they will run in (as the file or, if larger, as the config builds them), loader
    # copies, activations
    file_numel = weights_numel(folder) if file_numel is None else file_numel
    need = max(file_numel, config_numel) * bytes_per_param * 1.2 + 256e6
    free = available_memory()
    if free is not None and need > free:
        raise ModelLoadError(f"{folder.path.name} needs about {need / 1e9:.1f} GB of memory but only "
                             f"{free / 1e9:.1f} GB are free: close other programs or choose a smaller model")


# -- model -------------------------------------------------------------------------------------------
def _model_class(tf, folder: HFFolder, config):
    if is_encoder_decoder(config):  # T5, BART, Marian, …: attnviz.hf.encdec_model
        return encdec_class(tf, folder.architecture, config)
    if folder.architecture:
        cls = getattr(tf, folder.architecture, None)
        if cls is None:
            raise ModelLoadError(f"unsupported architecture {folder.architecture!r}: transformers "
                                 f"{tf.__version__} has no such model")
    else:
        try:
            cls = model_class_for(tf.AutoModel, config)
        except (KeyError, AttributeError):
            raise ModelLoadError(f"unsupported architecture: no model for {folder.model_type!r}") from None
    if getattr(cls, "main_input_name", "input_ids") not in ("input_ids", "pixel_values"):
        raise ModelLoadError(f"{cls.__name__} takes {cls.main_input_name}: attnviz opens text and image models")
    return cls


# recurrent / state-space models: their forward accepts output_attentions but they have no attention maps
_NO_ATTENTION = ("mamba", "mamba2", "falcon_mamba", "rwkv", "xlstm")


def _skeleton(cls, config, name: str):
    """(parameter count, whether it has attention) from the model built on the meta device: nothing is
    allocated, so a model too large for the machine or without attention is refused before its weights."""
    import inspect

    import torch

    from attnviz.hf.attention_record import is_attention_module

    try:
        with torch.device("meta"):
            skeleton = cls(config)
    except Exception as exc:  # third-party construction: one line
        raise ModelLoadError(f"cannot build {name} from its config.json: {str(exc).strip()[:200]}") from None
    numel = sum(p.numel() for p in skeleton.parameters())
    interface = any(is_attention_module(m) for m in skeleton.modules())
    try:
        takes = "output_attentions" in inspect.signature(cls.forward).parameters
    except (TypeError, ValueError):
        takes = False
    recorded = records_attentions(cls)
    has = (interface or recorded or takes) and str(config.model_type).lower() not in _NO_ATTENTION
    return numel, interface, has


# -- precision (issue 34, h34core): the checkpoint's own dtype unless asked otherwise -------------------------
DTYPES = ("auto", "float32", "float16", "bfloat16")


def model_dtype(config, dtype: str = "auto"):
    """The torch dtype a model runs in: ``dtype`` when given, else the checkpoint's own (config ``dtype`` /
    ``torch_dtype``) when it is float16 or bfloat16, else float32."""
    import torch

    if dtype not in DTYPES:
        raise ModelLoadError(f"unknown dtype {dtype!r}: choose {', '.join(DTYPES)}")
    if dtype != "auto":
        return getattr(torch, dtype)
    own = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    own = getattr(torch, own, None) if isinstance(own, str) else own
    return own if own in (torch.float16, torch.bfloat16) else torch.float32
# -------------------------------------------------------------------------------------------------------------


def _load_weights(cls, folder: HFFolder, config, dtype=None):
    import torch

    try:
        model, info = cls.from_pretrained(
            str(folder.path), config=config, local_files_only=True, trust_remote_code=False,
            attn_implementation="eager", dtype=dtype or torch.float32, use_safetensors=folder.safetensors is not None,
            weights_only=True, output_loading_info=True, ignore_mismatched_sizes=True)
    except Exception as exc:  # third-party loading raises many types; the user gets one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"cannot load the weights in {folder.path}: {first}") from None
    bad = [f"{k} {tuple(a)} in the file, {tuple(b)} in config.json"
           for k, a, b in sorted(info.get("mismatched_keys", []), key=lambda m: m[0])]
    missing = sorted(info.get("missing_keys", []))
    if bad or missing:
        what = bad[:2] if bad else [f"missing {', '.join(missing[:3])}"]
        count = len(bad) + len(missing)
        raise ModelLoadError(f"the weights in {folder.path} do not match its config.json ({count} tensors; "
                             f"{'; '.join(what)})")
    return model


def _tokenizer(tf, folder: HFFolder, vocab_size: int):
    from attnviz.hf.tokenizer import HFTokenizer

    if not any((folder.path / n).is_file() for n in _TOKENIZER_FILES):
        raise ModelLoadError(f"{folder.path} has no tokenizer files ({', '.join(_TOKENIZER_FILES[:3])}, …)")
    try:
        tok = tf.AutoTokenizer.from_pretrained(str(folder.path), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # see _load_weights
        raise ModelLoadError(f"cannot read the tokenizer in {folder.path}: {str(exc).strip()[:200]}") from None
    return HFTokenizer(tok, vocab_size)


def _processor(tf, folder: HFFolder):
    if not folder.has_processor:
        return None  # images are then resized to the config's size with ViT's default mean/std (notice)
    try:
        return tf.AutoImageProcessor.from_pretrained(str(folder.path), local_files_only=True,
                                                     trust_remote_code=False)
    except Exception as exc:  # see _load_weights
        raise ModelLoadError(f"cannot read preprocessor_config.json in {folder.path}: {str(exc)[:200]}") from None


def _labels(config, head: str) -> list[str] | None:
    if head not in ("classify", "token-classify"):
        return None
    id2label = getattr(config, "id2label", None) or {}
    return [str(id2label.get(i, id2label.get(str(i), f"class {i}"))) for i in range(int(config.num_labels))]


def load_hf_model(path, device=None, allow_pickle: bool = False, dtype: str = "auto"):
    """Load a Hugging Face model folder for tracing.

    Parameters
    ----------
    path : folder with ``config.json``, ``model.safetensors`` and tokenizer or image-processor files.
    device : "auto", "cpu", "cuda", "mps" or a torch.device.
    allow_pickle : read ``pytorch_model.bin`` with ``torch.load(weights_only=True)`` (refused otherwise).
    dtype : "auto" (the checkpoint's own float16 / bfloat16, else float32), "float32", "float16" or "bfloat16".

    Returns
    -------
    LoadedModel (``info["source"] == "huggingface"``, which the runtime's HuggingFaceAdapter owns) whose
    ``extra`` holds ``processor`` (the image processor or None).
    """
    import torch

    from attnviz.device import pick_device
    from attnviz.models.checkpoint import LoadedModel

    folder = detect_hf_folder(path)
    if folder is None:
        raise ModelLoadError(f"{path} is not a Hugging Face model folder (no config.json with a model_type)")
    _check_files(folder, allow_pickle)
    from attnviz.hf.config_bounds import check_config_sizes

    check_config_sizes(folder.doc, folder.path.name)  # 10⁷ layers refused here, before any skeleton is built
    file_numel = weights_numel(folder)  # every weight header read (bounded) before the config builds anything
    _check_memory(folder, 0, file_numel, param_bytes(folder.doc, dtype))
    tf = require_transformers(folder.path.name)
    with quiet_transformers(tf):
        try:
            config = tf.AutoConfig.from_pretrained(str(folder.path), local_files_only=True, trust_remote_code=False)
        except Exception as exc:  # unknown model_type, broken fields
            raise ModelLoadError(f"unsupported architecture in {folder.path}: {str(exc).strip()[:200]}") from None
        cls = _model_class(tf, folder, config)
        numel, interface, has_attention = _skeleton(cls, config, folder.architecture or folder.model_type)
        if not has_attention:
            raise ModelLoadError(f"{cls.__name__} has no attention layers (a convolutional, recurrent or "
                                 "state-space model): attnviz shows attention")
        _check_memory(folder, numel, file_numel, param_bytes(folder.doc, dtype))  # first: "needs 400 GB" says more
        if folder.safetensors is not None and numel > 16 * file_numel + 10_000_000:
            # a gross mismatch, found before the weights load (from_pretrained would build all of it first);
            # near misses are named tensor by tensor by _load_weights
            raise ModelLoadError(f"the weights in {folder.path} do not match its config.json (it describes "
                                 f"{numel:,} parameters, the weight files hold {file_numel:,})")
        model = _load_weights(cls, folder, config, model_dtype(config, dtype))
        arch = folder.architecture or type(model).__name__
        seq2seq = is_encoder_decoder(config)
        head = "lm" if seq2seq else head_of(arch)  # an encoder–decoder writes tokens
        vision = cls.main_input_name == "pixel_values"
        tokenizer = None if vision else _tokenizer(tf, folder, int(getattr(config, "vocab_size", 0) or 0))
        processor = _processor(tf, folder) if vision else None
    if seq2seq:
        model.cfg = describe_encdec(config, arch, max_len=encdec_positions(config, tokenizer.max_length), model=model)
    else:
        limits = [n for n in (positions_of(config, folder.family), tokenizer and tokenizer.max_length) if n]
        model.cfg = describe_model(config, arch, max_len=min(limits) if limits else None)
    device = pick_device(device) if not isinstance(device, torch.device) else device
    model.to(device).eval()
    from attnviz.hf.dtype_support import run_in_supported_dtype

    # float16 / bfloat16 stay so unless the device lacks a kernel in that dtype (then float32, in one line)
    dtype_notice = run_in_supported_dtype(model, vision=vision, seq2seq=seq2seq)
    info = {"name": folder.path.name, "source": "huggingface", "task": None, "architecture": arch,
            "family": folder.family_name, "model_type": folder.model_type, "head": head,
            "labels": _labels(config, head), "qkv_available": interface,
            "transformers": tf.__version__, "dtype": str(next(model.parameters()).dtype).replace("torch.", "")}
    if dtype_notice:
        info["notice"] = dtype_notice  # every trace of this model carries it (runtime.huggingface)
    extra = {"processor": processor}
    return LoadedModel(model=model, config=model.cfg, info=info, tokenizer=tokenizer, path=folder.path,
                       device=device, extra=extra)
