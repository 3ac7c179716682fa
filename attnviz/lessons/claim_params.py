"""The parameters each claim kind takes, with their types and ranges: checked when a scene is read.

A lesson is a shared file, so every claim parameter is untrusted: ``"min_share": "abc"``, ``{…}``,
``Infinity`` or a label no class has must be one line naming the scene and the key, before any model runs
(an unchecked label once sent the shapes task's probe search into an endless loop).
"""

from __future__ import annotations

import math

from attnviz.errors import InputError

__all__ = ["CLAIM_PARAMS", "MODEL_PARAMS", "check_claim"]

_SHARE = ("float", 0.0, 1.0)
_MODEL = ("str", 1, 4096)  # a bundled model's name or a model folder
# kind → {parameter: (type, low, high)}; "str" bounds are lengths, "choice" lists the values
CLAIM_PARAMS: dict[str, dict[str, tuple]] = {
    "attends-to": {"target": ("str", 1, 200), "min_share": _SHARE, "min_weight": _SHARE, "max_others": _SHARE,
                   "max_deleted": _SHARE},
    "six-steps": {"max_top": _SHARE},
    "matrix-form": {},
    "concat-heads": {"min_tv": _SHARE},
    "causal-mask": {},
    "scale-saturation": {"min_rise": _SHARE},
    "permutation": {"with_positions": _MODEL, "min_contrast": _SHARE, "perm_seed": ("int", 0, 2**32 - 1)},
    "word-order": {"with_positions": _MODEL, "without_positions": _MODEL, "new_templates_below": _SHARE},
    "sinusoidal": {"offsets": ("int", 1, 65_536)},
    "filters-pca": {"k": ("int", 1, 4096), "top": ("int", 1, 4096), "min_smooth": _SHARE},
    "rollout-pointing": {"label": ("int", 0, 9999), "layout": ("choice", "large", "offcentre"),
                         "margin": ("float", -1.0, 1.0)},
    "cross-alignment": {},
    "attention-cost": {"max_length": ("int", 512, 8192), "tolerance": ("float", 0.05, 1.0)},
    "scale-training": {"min_gap": ("float", 0.0, 10.0), "max_start_entropy": ("float", 0.0, 20.0),
                       "replay_steps": ("int", 1, 200), "tolerance": ("float", 0.0, 1.0)},
    "path-length": {"min_accuracy": _SHARE, "min_gap": _SHARE, "max_rnn_ratio": ("float", 0.0, 1.0),
                    "min_attention_ratio": ("float", 0.0, 1.0), "tolerance": ("float", 0.0, 1.0)},
    "masked-lm": {"min_accuracy": _SHARE, "min_gap": _SHARE, "min_context": _SHARE, "max_elsewhere": _SHARE},
}
REQUIRED = {"attends-to": ("target",)}
MODEL_PARAMS = ("with_positions", "without_positions")  # parameters that name a model (an input)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _check_value(kind: str, key: str, value, spec: tuple) -> None:
    typ = spec[0]
    where = f"claim {kind!r}: {key!r}"
    if typ == "choice":
        if value not in spec[1:]:
            raise InputError(f"{where} must be one of {', '.join(spec[1:])}, not {_short(value)}")
        return
    if typ == "str":
        if not isinstance(value, str) or not spec[1] <= len(value) <= spec[2]:
            raise InputError(f"{where} must be text of {spec[1]}..{spec[2]} characters, not {_short(value)}")
        return
    # numbers: bool is an int to Python, never a threshold to a lesson
    ok_types = (int,) if typ == "int" else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok_types):
        raise InputError(f"{where} must be {'a whole number' if typ == 'int' else 'a number'}, not {_short(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where} must be a finite number, not {_short(value)}")
    if not spec[1] <= value <= spec[2]:
        raise InputError(f"{where} must be in {spec[1]:g}..{spec[2]:g}, not {_short(value)}")


def check_claim(claim) -> None:
    """Raise :class:`InputError` (one line) unless ``claim`` is a known kind with valid parameters."""
    if not isinstance(claim, dict):
        raise InputError("a claim must be a JSON object")
    kind = claim.get("kind")
    if not isinstance(kind, str):
        raise InputError("a claim needs a 'kind'")
    if kind not in CLAIM_PARAMS:
        raise InputError(f"unknown claim kind {_short(kind)}: one of {', '.join(CLAIM_PARAMS)}")
    spec = CLAIM_PARAMS[kind]
    unknown = sorted(str(k) for k in claim if k != "kind" and k not in spec)
    if unknown:
        known = ", ".join(spec) or "none"
        raise InputError(f"claim {kind!r} takes no parameter {_short(unknown[0])} (its parameters: {known})")
    for key in REQUIRED.get(kind, ()):
        if key not in claim:
            raise InputError(f"claim {kind!r} needs {key!r}")
    for key, value in claim.items():
        if key != "kind":
            _check_value(kind, key, value, spec[key])
