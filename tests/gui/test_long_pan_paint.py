"""What a pan frame of a long map paints is what was painted before the speed-ups: the image's pixels are
its LUT's colours, and the token axes draw exactly the labels in view (every stride-th, the selected one)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attnviz.gui.style import ViewStyle, colour_lut  # noqa: E402


def test_the_image_pixels_are_the_luts_colours(qapp):
    from attnviz.gui.widgets.heatmap import CellImageItem

    rng = np.random.default_rng(0)
    idx = rng.integers(0, 256, (37, 53)).astype(np.uint8)  # 255: the masked colour
    lut = colour_lut(ViewStyle())
    item = CellImageItem()
    item.setImage(idx, autoLevels=False, levels=(0, 255), lut=lut)
    item.render()
    img = item.qimage.convertToFormat(QImage.Format.Format_RGBA8888)
    got = np.frombuffer(img.constBits(), np.uint8).reshape(37, img.bytesPerLine() // 4, 4)[:, :53]
    expected = lut[idx]  # (37, 53, 3 or 4): the colour of every index, looked up here
    np.testing.assert_array_equal(got[..., :3], expected[..., :3])
    assert not np.array_equal(got[..., :3], lut[idx.T.copy().T[::-1]][..., :3])  # negative control: rows flipped


def _old_rule(axis, a, b, lo, hi):
    """The labels the axis drew before: every visible_indices() label whose position is inside [lo, hi]."""
    idx = np.asarray(axis.visible_indices(), dtype=np.intp)
    pos = a * np.asarray(axis.centers)[idx] + b
    return sorted(idx[(pos >= lo) & (pos <= hi)].tolist())


@pytest.mark.parametrize("selected", [None, 5003, 5001, 20])
def test_the_axis_draws_the_labels_in_view(qapp, selected):
    import pyqtgraph as pg

    from attnviz.gui.widgets.token_axis import TokenAxisItem

    view = pg.GraphicsLayoutWidget()
    vb = view.ci.addViewBox()
    axis = TokenAxisItem("bottom", ViewStyle())
    view.ci.addItem(axis, row=1, col=0)
    axis.link_view(vb)
    axis.set_labels([f"t{i}" for i in range(16384)])
    axis.set_selected(selected)
    view.resize(900, 600)
    view.show()
    QApplication.processEvents()
    for x0, x1 in ((4990, 5040), (0, 16384), (4000, 4700), (12.3, 90.8)):
        vb.setRange(xRange=(x0, x1), padding=0)
        QApplication.processEvents()
        a, b = axis._affine()
        lo, hi = -40.0, axis.boundingRect().width() + 40.0
        got = sorted(axis._indices_in_view(a, b, lo, hi)[0].tolist())
        assert got == _old_rule(axis, a, b, lo, hi) and got
        assert got != _old_rule(axis, a, b, lo + 300, hi + 300)  # negative control: labels off by 300 px differ
        if selected is not None and lo <= a * (selected + 0.5) + b <= hi:
            assert selected in got
    view.close()


def _axis_view(qapp, x0, x1):
    import pyqtgraph as pg

    from attnviz.gui.widgets.token_axis import TokenAxisItem

    view = pg.GraphicsLayoutWidget()
    view.setBackground("w")
    vb = view.ci.addViewBox()
    axis = TokenAxisItem("bottom", ViewStyle())
    view.ci.addItem(axis, row=1, col=0)
    axis.link_view(vb)
    axis.set_labels([f"t{i}" for i in range(16384)])
    view.resize(900, 400)
    view.show()
    vb.setRange(xRange=(x0, x1), padding=0)
    QApplication.processEvents()
    return view, vb, axis


def _ink(view, axis) -> np.ndarray:
    """Dark pixels of the axis' labels (True where text is drawn)."""
    img = view.grab().toImage().convertToFormat(QImage.Format.Format_RGBA8888)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    top = int(axis.mapToScene(axis.boundingRect().topLeft()).y())
    return a[top:, :, :3].min(axis=2) < 128


def test_a_panned_axis_draws_the_labels_a_fresh_one_draws(qapp):
    """The labels copied from the strip drawn before the pan are where a fresh axis draws them (to a pixel)."""
    view, vb, axis = _axis_view(qapp, 5000, 5100)
    for d in (3, 6, 9, 12):  # a drag: the strip drawn at the first frame is moved
        vb.setRange(xRange=(5000 + d, 5100 + d), padding=0)
        QApplication.processEvents()
    assert axis._strip is not None and axis._strip[1] != axis._affine()[1]  # drawn at another offset: reused
    got = _ink(view, axis)
    fresh_view, _, fresh = _axis_view(qapp, 5012, 5112)
    want = _ink(fresh_view, fresh)
    near = np.zeros_like(want)  # within a pixel of a fresh label's ink
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            near |= np.roll(np.roll(want, dy, 0), dx, 1)
    assert got.sum() > 500 and (got & ~near).sum() <= 0.01 * got.sum()
    other_view, _, other = _axis_view(qapp, 5015, 5115)  # negative control: three tokens further
    assert (got & ~np.roll(np.roll(_ink(other_view, other), 1, 0), 1, 1)).sum() > 0.05 * got.sum()
    for v in (view, fresh_view, other_view):
        v.close()
