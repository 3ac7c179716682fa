"""``--image sample:NAME``: the spelling lesson scenes use is accepted by the command line, and an unknown
sample is one line on stderr with exit code 2."""

from __future__ import annotations

import pytest

from attnviz.vision.samples import resolve_image, sample_path


def test_sample_names_resolve_like_scenes():
    assert resolve_image("sample:shapes-star-offcentre") == str(sample_path("shapes-star-offcentre"))
    assert resolve_image("photo.png") == "photo.png"  # a file path is left alone


def test_unknown_sample_is_one_line_exit_2(capsys):
    from attnviz.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["trace", "--model", "shapes", "--image", "sample:no-such", "-o", "never.npz"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such" in err[0]
