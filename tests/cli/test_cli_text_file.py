"""``--text-file PATH`` on trace, steps, export and heads: the file's text is the input; a bad file is one line, exit 2."""

import json

import numpy as np
import pytest

from attnviz.capture import Trace
from attnviz.cli import main
from attnviz.errors import InputError
from attnviz.text.text_file import read_text_file

SENTENCE = "the animal didn't cross the street because it was too tired"


def test_a_bom_is_dropped_and_the_text_kept(tmp_path):
    f = tmp_path / "in.txt"
    f.write_bytes("\ufeffcafé\r\nnext".encode("utf-8"))
    assert read_text_file(f) == "café\r\nnext"


@pytest.mark.parametrize("content, fragment", [
    (b"\xff\xfe\x00a", "NUL"),                # UTF-16: a binary file as far as UTF-8 is concerned
    (b"caf\xe9", "not UTF-8"),                 # Latin-1
    (b"   \n\t", "no text"),
    (b"x" * 101, "larger than"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, content, fragment):
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    with pytest.raises(InputError, match=fragment):
        read_text_file(f, max_bytes=100)


def test_the_bound_is_not_a_refusal_of_a_file_at_it(tmp_path):  # negative control of the size check
    f = tmp_path / "ok.txt"
    f.write_bytes(b"x" * 100)
    assert read_text_file(f, max_bytes=100) == "x" * 100


def test_trace_from_a_file_equals_trace_from_the_same_text(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_bytes(("\ufeff" + SENTENCE).encode("utf-8"))
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert main(["trace", "--model", "coref", "--text-file", str(f), "-o", str(a)]) == 0
    assert main(["trace", "--model", "coref", "--text", SENTENCE, "-o", str(b)]) == 0
    ta, tb = Trace.load(a), Trace.load(b)
    assert ta.tokens == tb.tokens and "animal" in ta.tokens
    np.testing.assert_array_equal(ta.probs(0), tb.probs(0))
    assert "no --text or --image given" not in capsys.readouterr().err


def test_steps_and_heads_read_the_file(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_text(SENTENCE, encoding="utf-8")
    assert main(["steps", "--model", "coref", "--text-file", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["input"] == SENTENCE
    assert main(["heads", "--model", "coref", "--text-file", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_inputs"] == 1


def test_export_reads_the_file(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_text(SENTENCE, encoding="utf-8")
    out = tmp_path / "map.png"
    assert main(["export", "--model", "coref", "--text-file", str(f), "--view", "head-map", "-o", str(out)]) == 0
    assert out.is_file() and out.stat().st_size > 0


@pytest.mark.parametrize("command", [["trace", "-o", "OUT.npz"], ["steps", "--json"], ["heads", "--json"],
                                     ["export", "--view", "head-map", "-o", "OUT.png"]])
def test_a_bad_file_is_one_line_exit_2(tmp_path, capsys, command):
    f = tmp_path / "latin1.txt"
    f.write_bytes(b"caf\xe9 au lait")
    argv = [str(tmp_path / a) if a.startswith("OUT") else a for a in command]
    code = main([argv[0], "--model", "coref", "--text-file", str(f), *argv[1:]])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "not UTF-8" in err
    assert not list(tmp_path.glob("OUT*"))


def test_text_and_text_file_are_exclusive(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_text(SENTENCE, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["trace", "--model", "coref", "--text", "x", "--text-file", str(f), "-o", str(tmp_path / "t.npz")])
    assert exc.value.code == 2
