"""A scene: the whole state of one exploration, as a small JSON file that reproduces the same figure.

Format (``"format": "attnviz-scene"``, ``"version": 1``); every key but ``model`` and one input is optional::

    {
      "format": "attnviz-scene", "version": 1,
      "model": "coref",                      # a bundled model's name or a model folder
      "text": "The animal didn't cross the street because it was too tired",
      "image": null,                         # or a file (relative to the scene file) or "sample:shapes-star"
      "target": null,                        # encoder–decoders: the output the decoder reads (null: its own)
      "view": "head-map",                    # any `attnviz export --view` name
      "part": "self", "layer": 1, "head": 3, "query": 8,   # null layer/head/query: the model's focus
      "step": null,                          # walkthrough step for the "steps" view (1..6 or a name)
      "whatif": {"scale": "model", "temperature": 1.0, "causal": null, "positional": true, "ablate": []},
      "colormap": "viridis", "theme": "light",
      "title": "'it' finds the animal", "caption": "…",
      "claim": {"kind": "attends-to", "target": "animal"}   # lessons only: see attnviz.lessons.claims
    }

Qt-free: the app, ``attnviz export --scene`` and ``attnviz lesson`` all read scenes through here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from attnviz.errors import InputError

__all__ = ["Scene", "load_scene", "save_scene", "scene_from_dict", "is_scene_file", "SCENE_FORMAT",
           "SCENE_SUFFIX", "WHATIF_KEYS"]

SCENE_FORMAT = "attnviz-scene"
SCENE_SUFFIX = ".attnviz-scene.json"
VERSION = 1
PARTS = ("self", "cross", "enc")
WHATIF_KEYS = {"scale": "model", "temperature": 1.0, "causal": None, "positional": True, "ablate": []}
# a scene is a few hundred bytes nested 3 deep; these bounds keep a shared file from costing memory or a crash
MAX_SCENE_BYTES = 1_000_000
MAX_DEPTH = 16
MAX_CHARS = {"model": 4096, "image": 4096, "text": 20_000, "view": 64, "colormap": 64, "theme": 64, "title": 500,
             "step": 16}
MAX_INDEX = 1_000_000  # a layer, head or query beyond this is a typo on any model attnviz can load
MAX_ABLATE = 4096


@dataclass
class Scene:
    """One saved exploration; ``to_dict()`` / :func:`scene_from_dict` round-trip it exactly."""

    model: str
    text: str | None = None
    image: str | None = None
    target: str | None = None  # what an encoder–decoder's decoder reads; None: its own greedy output
    view: str = "head-map"
    part: str = "self"
    layer: int | None = None
    head: int | None = None
    query: int | None = None
    step: str | None = None
    whatif: dict = field(default_factory=dict)
    colormap: str = "viridis"
    theme: str = "light"
    title: str = ""
    caption: str = ""
    claim: dict | None = None
    base_dir: str | None = field(default=None, compare=False)  # where relative image paths are read from

    def to_dict(self) -> dict:
        d = {"format": SCENE_FORMAT, "version": VERSION}
        d.update({k: v for k, v in asdict(self).items() if k != "base_dir"})
        if not d["whatif"]:
            d.pop("whatif")
        if d["claim"] is None:
            d.pop("claim")
        if d["target"] is None:  # scenes without one stay as they were written before targets existed
            d.pop("target")
        return d

    def whatif_switches(self):
        """The scene's :class:`attnviz.whatif.WhatIf` (the default when it changes nothing)."""
        from attnviz.whatif import WhatIf

        w = {**WHATIF_KEYS, **self.whatif}
        return WhatIf(scale=w["scale"], temperature=float(w["temperature"]), causal=w["causal"],
                      positional=bool(w["positional"]), ablate=frozenset(tuple(a) for a in w["ablate"]))

    def image_source(self):
        """The image argument for ``run_trace``: a path (resolved) or None for text scenes."""
        if self.image is None:
            return None
        if self.image.startswith("sample:"):
            from attnviz.vision.samples import resolve_image

            try:
                return resolve_image(self.image)
            except InputError as exc:
                raise InputError(f"the scene names a sample image this build does not have: {exc}") from None
        path = Path(self.image)
        if not path.is_absolute() and self.base_dir:
            path = Path(self.base_dir) / path
        return str(path)


def _check_type(key: str, value, types, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise InputError(f"scene key {key!r} must be {getattr(types, '__name__', types)}, not {_short(repr(value))}")
    if not isinstance(value, types):
        raise InputError(f"scene key {key!r} has the wrong type ({type(value).__name__}: {_short(repr(value))})")


def scene_from_dict(d: dict, base_dir: str | None = None) -> Scene:
    """Validate a parsed scene (InputError naming the first problem) and build the :class:`Scene`."""
    if not isinstance(d, dict):
        raise InputError("a scene must be a JSON object")
    fmt = d.get("format", SCENE_FORMAT)
    if fmt != SCENE_FORMAT:
        raise InputError(f"not an attnviz scene (format {_short(repr(fmt))})")
    if d.get("version", VERSION) != VERSION:
        raise InputError(f"scene version {_short(repr(d.get('version')))} is not supported (this build reads version {VERSION})")
    known = {f.name for f in fields(Scene)} - {"base_dir"}
    unknown = sorted(set(d) - known - {"format", "version"})
    if unknown:
        raise InputError(f"unknown scene key(s): {', '.join(repr(k)[:40] for k in unknown[:10])}")  # repr: one line
    if not isinstance(d.get("model"), str) or not d["model"].strip():
        raise InputError("the scene names no model")
    if (d.get("text") is None) == (d.get("image") is None):
        raise InputError("a scene needs exactly one input: text or image")
    for key in ("text", "image", "step", "target"):
        _check_type(key, d.get(key), (str, int) if key == "step" else str, allow_none=True)
    if d.get("target") is not None and d.get("text") is None:
        raise InputError("a scene's target is the output an encoder–decoder reads for its text: it needs a text")
    for key in ("view", "colormap", "theme", "title", "caption"):
        if key in d:
            _check_type(key, d[key], str)
    for key, limit in MAX_CHARS.items():
        if isinstance(d.get(key), str) and len(d[key]) > limit:
            raise InputError(f"scene key {key!r} is {len(d[key]):,} characters long, more than {limit:,}")
    if "caption" in d:
        from attnviz.lessons.caption import check_caption

        check_caption(d["caption"])  # its placeholders are checked now, their values when it is shown
    for key in ("layer", "head", "query"):
        _check_type(key, d.get(key), int, allow_none=True)
        if d.get(key) is not None and d[key] < 0:
            raise InputError(f"scene key {key!r} must be ≥ 0, not {_short(d[key])}")
        if d.get(key) is not None and d[key] > MAX_INDEX:
            raise InputError(f"scene key {key!r} must be ≤ {MAX_INDEX:,}, not {_short(d[key])}")
    if d.get("part", "self") not in PARTS:
        raise InputError(f"scene part {_short(repr(d.get('part')))} must be one of {', '.join(PARTS)}")
    whatif = d.get("whatif", {}) or {}
    _check_type("whatif", whatif, dict)
    bad = sorted(set(whatif) - set(WHATIF_KEYS))
    if bad:
        raise InputError(f"unknown what-if switch(es): {', '.join(map(_short, bad))}")
    if isinstance(whatif.get("ablate"), list) and len(whatif["ablate"]) > MAX_ABLATE:
        raise InputError(f"the scene ablates {len(whatif['ablate']):,} heads, more than {MAX_ABLATE:,}")
    if d.get("claim") is not None:
        from attnviz.lessons.claim_params import check_claim

        check_claim(d["claim"])  # every parameter's type and range, before any model runs
    step = d.get("step")
    scene = Scene(**{k: v for k, v in d.items() if k in known}, base_dir=base_dir)
    scene.step = None if step is None else str(step)
    scene.whatif = dict(whatif)
    try:
        scene.whatif_switches()  # validates the switches (scale name, temperature, ablate pairs)
    except InputError:
        raise
    except (TypeError, ValueError, OverflowError, AttributeError) as exc:  # e.g. ablate [[1, [2]]]
        raise InputError(f"the scene's what-if switches are malformed ({_short(str(exc))})") from None
    return scene


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _read_json(path, what: str, max_bytes: int = MAX_SCENE_BYTES):
    """A scene or lesson file through the one bounded JSON loader (size and nesting: files are shared)."""
    from attnviz.io.jsonfile import read_json_file

    return read_json_file(path, max_bytes, MAX_DEPTH, what=what, error=InputError)


def load_scene(path) -> Scene:
    """Read a scene file; relative image paths are read relative to it."""
    doc = _read_json(path, "scene file")
    try:
        return scene_from_dict(doc, base_dir=str(Path(path).resolve().parent))
    except InputError as exc:  # name the file: it may be a colleague's, opened among others
        raise InputError(f"scene {Path(path).name}: {exc}") from None


def save_scene(scene: Scene, path) -> Path:
    """Write ``scene`` as indented JSON, atomically; returns the path."""
    from attnviz.io import write_atomic

    path = Path(path)
    text = json.dumps(scene.to_dict(), indent=1, ensure_ascii=False) + "\n"
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return path


def is_scene_file(path) -> bool:
    """True when ``path`` is a JSON file whose ``format`` is a scene (cheap: reads at most 64 kB)."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8-sig") as fh:  # a byte-order mark is accepted, as by the reader
            head = fh.read(65536)
        return json.loads(head).get("format") == SCENE_FORMAT
    except (OSError, ValueError, AttributeError, RecursionError):  # "[" × 100000 is no scene, not a crash
        return False
