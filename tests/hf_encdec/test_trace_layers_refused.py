"""``attnviz trace --layers`` is for decoders and encoders: an encoder–decoder is traced in full and says so."""

from __future__ import annotations

from attnviz.cli import main

from .factories import SOURCE


def test_layers_on_an_encoder_decoder_is_refused_in_one_line(encdec_folders, tmp_path, capsys):
    out = tmp_path / "t.npz"
    code = main(["trace", "--model", str(encdec_folders["t5"]), "--text", SOURCE, "--layers", "0", "-o", str(out)])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("attnviz: error")]
    assert code == 2 and len(err) == 1 and "is traced in full" in err[0] and not out.exists()
