"""A lesson: an ordered list of scenes, each with a title and a claim (a documented JSON format).

::

    {
      "format": "attnviz-lesson", "version": 1,
      "name": "attention",
      "title": "Attention, figure by figure",
      "scenes": [ {<a scene, see attnviz.lessons.scene>, "title": "...", "caption": "... {here:.2f} ...",
                   "claim": {"kind": "attends-to", "target": "animal"}}, ... ]
    }

Captions may name the claim's measured values in ``{}`` (``{here:.2f}``, ``{held:.0%}``, ``{n}`` …, see
:mod:`attnviz.lessons.claims`); they are filled in each time the scene is shown or exported, never stored.
Built-in lessons live in ``attnviz/lessons/builtin/NAME.json``; any other lesson is read from its file.
Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from attnviz.errors import InputError
from attnviz.lessons.scene import Scene, _read_json, _short, scene_from_dict

__all__ = ["Lesson", "load_lesson", "lesson_names", "builtin_dir", "LESSON_FORMAT"]

LESSON_FORMAT = "attnviz-lesson"
VERSION = 1
MAX_LESSON_BYTES = 4_000_000  # the built-in lesson is 5 kB
MAX_SCENES = 500


@dataclass
class Lesson:
    name: str
    title: str
    scenes: list[Scene]
    path: Path | None = None


def builtin_dir() -> Path:
    return Path(__file__).resolve().parent / "builtin"


def lesson_names() -> list[str]:
    """Names of the built-in lessons."""
    return sorted(p.stem for p in builtin_dir().glob("*.json"))


def lesson_from_dict(d: dict, base_dir: str | None = None, source: str = "lesson") -> Lesson:
    if not isinstance(d, dict) or d.get("format") != LESSON_FORMAT:
        raise InputError(f"{source} is not an attnviz lesson (its \"format\" must be {LESSON_FORMAT!r})")
    if d.get("version", VERSION) != VERSION:
        raise InputError(f"lesson version {_short(repr(d.get('version')))} is not supported (this build reads {VERSION})")
    scenes = d.get("scenes")
    if not isinstance(scenes, list) or not scenes:
        raise InputError(f"{source} has no scenes")
    if len(scenes) > MAX_SCENES:
        raise InputError(f"{source} has {len(scenes):,} scenes, more than {MAX_SCENES}")
    out = []
    for i, s in enumerate(scenes, 1):
        try:
            scene = scene_from_dict(s, base_dir=base_dir)
        except InputError as exc:
            raise InputError(f"{source}, scene {i}: {exc}") from None
        if not scene.title:
            raise InputError(f"{source}, scene {i} has no title")
        out.append(scene)
    name = str(d.get("name") or source)[:200]
    return Lesson(name, str(d.get("title") or name)[:500], out)


def load_lesson(name_or_path) -> Lesson:
    """A built-in lesson by name, or a lesson file."""
    text = str(name_or_path)
    path = builtin_dir() / f"{text}.json" if text in lesson_names() else Path(text)
    if not path.is_file():
        known = ", ".join(lesson_names())
        raise InputError(f"no lesson {text!r}: give a lesson file or one of: {known}")
    doc = _read_json(path, "lesson file", MAX_LESSON_BYTES)
    lesson = lesson_from_dict(doc, base_dir=str(path.resolve().parent), source=path.name)
    lesson.path = path
    return lesson
