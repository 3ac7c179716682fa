"""Check a native model folder completely before anything is built or allocated.

One pass answers "can this folder be loaded?" without reading the weights themselves:

1. ``config.json`` is read with bounded size and nesting (a deeply nested file would otherwise end in a
   RecursionError inside the JSON parser);
2. the ``model`` section has the right types and ranges (``n_layers: "three"``, ``dropout: 2``,
   ``patch_size: 0``, ``attn_scale: NaN``... are refused here, not as tracebacks in torch);
3. the tokenizers agree with the config (present for text models, the special tokens present, as many
   entries as the embedding has rows), and a built-in task named in the file trains this kind of model;
4. the parameter shapes the config implies (:mod:`attnviz.models.expected_shapes`: no weights initialised) equal the
   shapes in the ``model.safetensors`` header, which is read without the tensor data, and the file is as
   long as its header says;
5. before any of that builds anything: the memory the config implies (parameters, position tables, a
   short input's activations: :mod:`attnviz.models.memory`) fits in the memory available now.

Every failure is a :class:`~attnviz.errors.ModelLoadError` whose message is one line; the full list of
problems (e.g. every mismatching weight) is on its ``details`` attribute for a "details" button.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import fields
from pathlib import Path

from attnviz.errors import ModelLoadError
from attnviz.models.expected_shapes import CPU_SHAPE_BUILD_MAX_PARAMS, expected_shapes
from attnviz.models import memory as _memory
from attnviz.models.memory import available_memory, count_parameters, position_table_elements

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "LIMITS", "read_json_bounded", "check_json_depth",
           "validate_model_dict", "validate_tokenizer_dict", "read_safetensors_header", "expected_shapes",
           "check_weight_shapes", "available_memory", "check_memory", "estimate_training_bytes",
           "validate_model_folder"]

MAX_JSON_BYTES = 64 * 1024 * 1024  # a bundled config with a BPE vocabulary is ~0.1 MB
MAX_JSON_DEPTH = 64  # attnviz configs nest 5 deep; Hugging Face configs a few more
MAX_HEADER_BYTES = 32 * 2**20  # ~100 bytes per tensor: 300 000 tensors (the reference allows 100 MB; parsing
# that peaks near 1 GB, and no model attnviz can show has a header near it)
# (low, high) per integer field of ModelConfig: generous for any model this app can show, but finite, so a
# typo such as n_layers 1e9 is refused before a module is made
LIMITS = {
    "vocab_size": (0, 1_000_000), "tgt_vocab_size": (0, 1_000_000), "n_layers": (1, 256),
    "n_dec_layers": (0, 256), "n_heads": (1, 256), "n_kv_heads": (0, 256), "d_model": (1, 16_384),
    "d_head": (0, 4096), "max_len": (1, 65_536), "n_classes": (1, 1_000_000), "image_size": (1, 4096),
    "patch_size": (1, 4096), "in_chans": (1, 16),
}
_FLOAT_FIELDS = {"mlp_ratio": (0.0, 64.0), "attn_scale": (0.0, 1e6), "dropout": (0.0, 1.0)}
_FLOAT_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}
_DTYPE_BYTES = {**_FLOAT_DTYPES, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
                "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8}  # every dtype a Hugging Face file may hold


def _fail(message: str, details: list[str] | None = None) -> ModelLoadError:
    exc = ModelLoadError(message)
    exc.details = "\n".join(details) if details else message
    return exc


# -- JSON ----------------------------------------------------------------------------------------------
def check_json_depth(doc, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ModelLoadError when ``doc`` nests deeper than ``limit`` (iterative: no recursion)."""
    from attnviz.io.jsonfile import JsonLimitError
    from attnviz.io.jsonfile import check_json_depth as check

    try:
        check(doc, limit)
    except JsonLimitError as exc:
        raise _fail(str(exc)) from None


def read_json_bounded(path, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH):
    """Parse a config JSON file of at most ``max_bytes`` nesting at most ``max_depth`` levels
    (:func:`attnviz.io.jsonfile.read_json_file`, the loader of every shared JSON file).

    Raises
    ------
    ModelLoadError
        Unreadable, too large, not UTF-8, not JSON, or too deeply nested; one line naming the file.
    """
    from attnviz.io.jsonfile import read_json_file

    return read_json_file(path, max_bytes, max_depth, what="config file", error=_fail)


# -- the model section -----------------------------------------------------------------------------------
def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


def validate_model_dict(data) -> "ModelConfig":  # noqa: F821 (ModelConfig imported inside)
    """Check the types and ranges of a config's ``model`` section and build the :class:`ModelConfig`."""
    from attnviz.models.config import ModelConfig

    if not isinstance(data, dict):
        raise _fail(f"invalid model config: the 'model' section is {_type_name(data)}, not an object")
    known = {f.name: f for f in fields(ModelConfig)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise _fail(f"invalid model config: unknown keys {', '.join(map(str, unknown))}")
    defaults = ModelConfig.__dataclass_fields__
    for name, value in data.items():
        default = defaults[name].default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise _fail(f"invalid model config: {name} must be true or false, not {value!r}")
        elif isinstance(default, int):
            # 64.0 from a hand-edited file is fine; 1e9 as a float is caught by the range below
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    isinstance(value, float) and not (math.isfinite(value) and value.is_integer())):
                raise _fail(f"invalid model config: {name} must be a whole number, not {value!r}")
            low, high = LIMITS[name]
            if not low <= value <= high:
                raise _fail(f"invalid model config: {name}={_short(value)} is outside {low}..{high:,}")
            data = {**data, name: int(value)}
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _fail(f"invalid model config: {name} must be a number, not {value!r}")
            low, high = _FLOAT_FIELDS[name]
            top_ok = value < high if name == "dropout" else value <= high
            if not (math.isfinite(value) and low <= value and top_ok):
                shown = "[0, 1)" if name == "dropout" else f"{low:g}..{high:g}"
                raise _fail(f"invalid model config: {name}={_short(value)} must be a finite number in {shown}")
            if name == "mlp_ratio" and value <= 0:
                raise _fail(f"invalid model config: mlp_ratio={value} must be positive")
        elif isinstance(default, str) and not isinstance(value, str):
            raise _fail(f"invalid model config: {name} must be a string, not {value!r}")
    cfg = ModelConfig(**data)  # choices and divisibility: ModelConfig.validate
    if cfg.n_kv_heads > cfg.n_heads:
        raise _fail(f"invalid model config: n_kv_heads={cfg.n_kv_heads} is more than n_heads={cfg.n_heads}")
    if int(cfg.d_model * cfg.mlp_ratio) < 1:
        raise _fail(f"invalid model config: d_model × mlp_ratio = {cfg.d_model * cfg.mlp_ratio:g} leaves "
                    "the MLP no hidden units")
    if cfg.kind == "vit" and cfg.patch_size > cfg.image_size:
        raise _fail(f"invalid model config: patch_size={cfg.patch_size} is larger than image_size="
                    f"{cfg.image_size}")
    if cfg.kind == "encoder-decoder" and cfg.tgt_vocab < 1:
        raise _fail("invalid model config: an encoder-decoder needs tgt_vocab_size >= 1")
    if cfg.head == "mlm" and cfg.kind != "encoder":
        raise _fail(f"invalid model config: head 'mlm' needs kind 'encoder', not {cfg.kind!r}")
    return cfg


def _short(value) -> str:
    return f"{value:g}" if isinstance(value, float) else f"{value:,}"


def validate_tokenizer_dict(data, rows: int, what: str = "tokenizer") -> None:
    """Check a tokenizer section: kind, a vocabulary of strings holding [PAD] and [UNK], ``rows`` entries."""
    if not isinstance(data, dict):
        raise _fail(f"invalid {what}: it is {_type_name(data)}, not an object")
    kind = data.get("kind")
    if kind not in ("char", "word", "bpe"):
        raise _fail(f"invalid {what}: kind {kind!r} is not char, word or bpe")
    vocab = data.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        raise _fail(f"invalid {what}: its vocabulary is empty or missing")
    if not all(isinstance(t, str) for t in vocab):
        raise _fail(f"invalid {what}: every vocabulary entry must be a string")
    if len(set(vocab)) != len(vocab):
        raise _fail(f"invalid {what}: the vocabulary repeats entries")
    missing = [t for t in ("[PAD]", "[UNK]") if t not in vocab]
    if missing:
        raise _fail(f"invalid {what}: the vocabulary lacks {', '.join(missing)}")
    for key in ("prefix", "suffix"):
        extra = data.get(key, [])
        if not isinstance(extra, list) or any(t not in vocab for t in extra if isinstance(t, str)) or not all(
                isinstance(t, str) for t in extra):
            raise _fail(f"invalid {what}: {key} must list tokens of its vocabulary")
    if "lowercase" in data and not isinstance(data["lowercase"], bool):
        raise _fail(f"invalid {what}: lowercase must be true or false")
    if kind == "bpe" and not isinstance(data.get("bpe_json"), str):
        raise _fail(f"invalid {what}: a bpe tokenizer needs its bpe_json")
    if kind == "bpe":  # JSON inside JSON: its nesting is bounded before the tokenizers library reads it
        try:
            check_json_depth(json.loads(data["bpe_json"]))
        except RecursionError:
            raise _fail(f"invalid {what}: its bpe_json is nested more than {MAX_JSON_DEPTH} levels deep") from None
        except ModelLoadError as exc:
            raise _fail(f"invalid {what}: its bpe_json is {exc}") from None
        except ValueError:
            pass  # not JSON: building the tokenizer names the problem ("invalid BPE tokenizer")
    if len(vocab) != rows:
        raise _fail(f"{what} has {len(vocab)} entries but the model's embedding has {rows} rows")


def _check_task(task, cfg, task_kind) -> None:
    """The task named in config.json must train this kind of model (``task_kind``: name → kind or None)."""
    kind = task_kind(task) if task is not None and task_kind is not None else None
    if kind is not None and kind != cfg.kind:
        raise _fail(f"config.json says task {task!r}, which trains {_a(kind)} model, but this is "
                    f"{_a(cfg.kind)} model")


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _check_info(doc: dict, cfg, task_kind=None) -> None:
    task = doc.get("task")
    if task is not None and not isinstance(task, str):
        raise _fail(f"invalid config: task must be a name, not {task!r}")
    labels = doc.get("labels")
    if labels is not None:
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise _fail("invalid config: labels must be a list of names")
        if cfg.head == "classify" and len(labels) != cfg.n_classes:
            raise _fail(f"config.json names {len(labels)} labels but the model has {cfg.n_classes} classes")
    for key in ("metrics", "history", "preprocess"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], dict):
            raise _fail(f"invalid config: {key} must be an object, not {_type_name(doc[key])}")
    history = doc.get("history") or {}
    lengths = {len(v) if isinstance(v, list) else -1 for v in history.values()}
    if -1 in lengths or len(lengths) > 1:
        raise _fail("invalid config: history must hold lists of equal length")
    _check_task(task, cfg, task_kind)


# -- weights ----------------------------------------------------------------------------------------------
def read_safetensors_header(path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Names → (dtype, shape) from a safetensors file's header, checked against the file's length.

    Only the header is read, never the tensor data.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise ValueError("shorter than a header")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES or n > size - 8:
                raise ValueError("its header length is implausible")
            raw = fh.read(n)
        from attnviz.io.jsonfile import parse_json_text

        # the one bounded parser (weight headers too): nesting and text checked, one line on failure
        header = parse_json_text(raw.decode("utf-8"), "its header", 8, error=ValueError)
        if not isinstance(header, dict):
            raise ValueError("its header is not an object")
    except OSError as exc:
        raise _fail(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError, ModelLoadError) as exc:  # UnicodeDecodeError is a ValueError
        raise _fail(f"{path} is not a readable safetensors file: {str(exc).splitlines()[0]}") from None
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    end = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            shape, (a, b) = entry["shape"], entry["data_offsets"]
            dtype = entry["dtype"]
            # whole numbers only (no 1e300 floats, no bools, no strings) and at most 8 dimensions
            if not isinstance(shape, list) or len(shape) > 8 or \
                    not all(type(d) is int and 0 <= d < 2**48 for d in [*shape, a, b]):
                raise ValueError
            shape = tuple(shape)
            count = math.prod(shape)
            if not isinstance(dtype, str) or dtype not in _DTYPE_BYTES or b - a != count * _DTYPE_BYTES[dtype]:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise _fail(f"{path} is not a readable safetensors file: bad header entry {name!r}") from None
        out[name] = (dtype, shape)
        end = max(end, int(b))
    if 8 + n + end > size:
        raise _fail(f"{path} is truncated ({size:,} bytes, its header needs {8 + n + end:,})")
    return out


def check_weight_shapes(expected: dict, header: dict, where: str) -> None:
    """Every expected parameter present in ``header`` with the same shape and a float dtype; no extras."""
    problems = []
    for name, shape in expected.items():
        if name not in header:
            problems.append(f"{name}: missing from the weights (config implies {shape})")
        elif header[name][1] != shape:
            problems.append(f"{name}: {header[name][1]} in the weights, config.json implies {shape}")
        elif header[name][0] not in _FLOAT_DTYPES:
            problems.append(f"{name}: stored as {header[name][0]}, not a float type")
    problems += [f"{name}: in the weights but not in the model config.json describes"
                 for name in header if name not in expected]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise _fail(f"weights in {where} do not match its config.json: {problems[0]}{more}", problems)


# -- memory -----------------------------------------------------------------------------------------------
# -- memory (the estimates live in attnviz.models.memory; these read the free memory through this module) --
def check_memory(needed: int, what: str, available: int | None = None) -> None:
    """Refuse ``needed`` bytes when more than 80 % of the memory available now (unknown: allowed)."""
    _memory.check_memory(needed, what, available_memory() if available is None else available)


def check_config_memory(cfg, tokens: int | None = None, what: str = "this model", grad: bool = False):
    """:func:`attnviz.models.memory.check_config_memory` against the memory available now."""
    return _memory.check_config_memory(cfg, tokens, what, available_memory(), grad)


def estimate_training_bytes(cfg, batch_size: int) -> int:
    """A rough upper estimate of one training step's memory: parameters, Adam state, gradients, activations.

    Activations per layer and example: ~(12 + 3·mlp_ratio)·T·D floats for the projections, norms and MLP,
    and 3·H·T² for logits, probabilities and their gradients (the explicit path; the fused one needs less).
    """
    n_params = count_parameters(cfg)  # arithmetic on the config: nothing is built
    t = cfg.n_patches + 1 if cfg.kind == "vit" else cfg.max_len
    layers = cfg.n_layers + (cfg.dec_layers * 2 if cfg.kind == "encoder-decoder" else 0)
    per_example = layers * ((12 + 3 * cfg.mlp_ratio) * t * cfg.d_model + 3 * cfg.n_heads * t * t)
    return int(4 * (4 * n_params + 2 * batch_size * per_example))


# -- the folder -------------------------------------------------------------------------------------------
def validate_model_folder(path, doc: dict | None = None, task_kind=None):
    """Check a native model folder completely; return ``(doc, config, header)`` ready to build and load.

    ``task_kind`` maps a task name to the model kind it trains (None when unknown); the runtime passes
    the built-in tasks' (models/ cannot know them: tasks are a layer above).

    Raises
    ------
    ModelLoadError
        One line; ``.details`` lists everything found (for example every mismatching weight).
    """
    path = Path(path)
    cfg_file = path / "config.json"
    if doc is None:
        if not cfg_file.is_file():
            raise _fail(f"{path} has no config.json: not a model directory")
        doc = read_json_bounded(cfg_file)
    if not isinstance(doc, dict):
        raise _fail(f"{cfg_file} is not an attnviz model config (it holds {_type_name(doc)}, not an object)")
    if "model" not in doc:
        raise _fail(f"{cfg_file} is not an attnviz model config (no 'model' section)")
    fmt = doc.get("format", 1)
    # (a string here is a task's description of its inputs that older saves let overwrite the version)
    if isinstance(fmt, (int, float)) and not isinstance(fmt, bool) and fmt > 1:
        raise _fail(f"{cfg_file} has format {fmt!r}; this attnviz reads format 1 (a newer attnviz wrote it?)")
    cfg = validate_model_dict(doc["model"])
    if cfg.kind != "vit":
        if "tokenizer" not in doc:
            raise _fail(f"{cfg_file} has no tokenizer: a text model needs one to read its input")
        validate_tokenizer_dict(doc["tokenizer"], cfg.vocab_size)
        if cfg.kind == "encoder-decoder":
            validate_tokenizer_dict(doc.get("tgt_tokenizer", doc["tokenizer"]), cfg.tgt_vocab,
                                    "target tokenizer" if "tgt_tokenizer" in doc else "tokenizer (also the target's)")
    _check_info(doc, cfg, task_kind)
    # before anything is built, even for shapes: the parameters, position tables and one short input's
    # activations, counted from the config alone (each field can be in range while the whole is 68 GB)
    est = check_config_memory(cfg, what=f"the model in {path.name}")
    weights = path / "model.safetensors"
    header = read_safetensors_header(weights) if weights.is_file() else None
    size = est.n_params + position_table_elements(cfg)
    stored = sum(math.prod(shape) for _, shape in header.values()) if header else None
    if stored is not None and stored != est.n_params and size > CPU_SHAPE_BUILD_MAX_PARAMS:
        # a big config whose weights cannot match: said from the counts, without the seconds a shape build takes
        raise _fail(f"weights in {path} do not match its config.json: the weights hold {stored:,} parameters, "
                    f"config.json implies {est.n_params:,}")
    # a CPU shape build only for a config that is small itself (the file's header may claim anything)
    expected = expected_shapes(cfg, n_params_hint=size)
    if header is not None:
        check_weight_shapes(expected, header, str(path))
    return doc, cfg, header
