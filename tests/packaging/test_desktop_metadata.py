"""The desktop entry and the AppStream metadata announce exactly what `attnviz PATH…` opens."""

from __future__ import annotations

import configparser
import mimetypes
import xml.etree.ElementTree as ET
from pathlib import Path

from attnviz.io.path_kinds import IMAGE_SUFFIXES, path_kinds

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
TRACE_MIME = "application/x-attnviz-trace"


def _accepted() -> set[str]:
    images = {mimetypes.guess_type(f"x{suffix}")[0] for suffix in IMAGE_SUFFIXES}
    assert None not in images
    return images | {"inode/directory", TRACE_MIME}


def test_desktop_entry_passes_files_and_lists_every_accepted_type():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(PACKAGING / "attnviz.desktop", encoding="utf-8")
    desk = entry["Desktop Entry"]
    assert desk["Exec"] == "attnviz %F"  # files and folders as paths, which the command line opens
    assert set(filter(None, desk["MimeType"].split(";"))) == _accepted()


def test_appstream_provides_the_same_types_and_the_binary():
    root = ET.parse(PACKAGING / "io.github.attnviz.metainfo.xml").getroot()
    provides = root.find("provides")
    assert {m.text for m in provides.findall("mediatype")} == _accepted()
    assert provides.find("binary").text == "attnviz"
    assert root.find("project_license").text == "MIT"


def test_the_trace_type_is_declared_and_its_kinds_are_known():
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    mime = ET.parse(PACKAGING / "attnviz-mime.xml").getroot().find("m:mime-type", ns)
    assert mime.get("type") == TRACE_MIME and mime.find("m:glob", ns).get("pattern") == "*.npz"
    assert {"model", "image", "trace"} <= set(path_kinds())
