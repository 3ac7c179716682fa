"""compare_whatif at a query position (issue 36, finding 7): an encoder–decoder's switched run reads the
output the trained one wrote, so one decoder position is the same prefix in both runs."""

from pathlib import Path

import numpy as np
import pytest

from attnviz.runtime import load_model
from attnviz.whatif import WhatIf, at_position, compare_whatif, prediction_row


@pytest.fixture(scope="module")
def translate():
    if not (Path(__file__).resolve().parents[1] / "assets/models/translate/config.json").exists():
        pytest.skip("the bundled translate model is not built")
    return load_model("translate", device="cpu")


def test_the_switched_decoder_reads_the_same_output_and_is_read_at_the_position(translate):
    c = compare_whatif(translate, WhatIf(positional=False), text="the big dog sees a small cat", position=3)
    # without positions the model re-generates a shorter translation; compared at it, position 3 read
    # another prefix (or, past its end, another position)
    assert list(c.after.tokens) == list(c.before.tokens)
    assert c.after.description.decoder_input == "target"
    p, where = prediction_row(c.before, 3)
    q, _ = prediction_row(c.after, 3)
    np.testing.assert_array_equal(p, np.asarray(c.before["next_probs"][3], np.float64))
    np.testing.assert_array_equal(q, np.asarray(c.after["next_probs"][3], np.float64))
    assert c.where == where and "decoder position 3" in where and c.read_at == 3
    assert c.changed == pytest.approx(0.5 * np.abs(p - q).sum())
    # control: the same runs read at another position give another reading
    c5 = at_position(c, translate, 5)
    assert c5.read_at == 5 and c5.before is c.before and c5.changed != c.changed
    # out of range: the default rule's row, named
    far = at_position(c, translate, 99)
    assert far.read_at == len(c.before.tokens) - 3 and f"decoder position {far.read_at}" in far.where
