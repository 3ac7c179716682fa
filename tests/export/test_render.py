"""Off-screen export: every format decodes at the requested size, text stays text, writes are atomic."""

import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from PIL import Image

from attnviz.errors import AttnvizError
from attnviz.figures.render import ExportOptions, export_widget, render_image

LABELS = [f"token{i}" for i in range(6)]


@pytest.fixture
def heat_widget(qtbot):
    w = pg.PlotWidget()
    w.setBackground("w")
    img = pg.ImageItem(np.linspace(0, 1, 36).reshape(6, 6), axisOrder="row-major")
    w.addItem(img)
    w.getAxis("bottom").setTicks([[(i + 0.5, t) for i, t in enumerate(LABELS)]])
    qtbot.addWidget(w)
    return w


@pytest.mark.parametrize("size", [(640, 360), (1200, 900)])
def test_png_has_requested_size(heat_widget, tmp_path, size):
    out = export_widget(heat_widget, tmp_path / "f.png", ExportOptions(width=size[0], height=size[1]))
    with Image.open(out) as im:
        assert im.size == size
        assert len(set(np.asarray(im.convert("L")).ravel().tolist())) > 10  # not blank


def test_png_scale_and_transparency(heat_widget, tmp_path):
    opts = ExportOptions(width=400, height=300, scale=2.0, transparent=True, title="")
    with Image.open(export_widget(heat_widget, tmp_path / "f.png", opts)) as im:
        assert im.size == (800, 600) and im.mode == "RGBA"


def test_svg_keeps_labels_as_text(heat_widget, tmp_path):
    out = export_widget(heat_widget, tmp_path / "f.svg", ExportOptions(width=800, height=600, title="Layer 0 head 1"))
    root = ET.parse(out).getroot()
    texts = " ".join("".join(el.itertext()) for el in root.iter() if el.tag.endswith("text"))
    assert "token3" in texts and "Layer 0 head 1" in texts
    assert root.get("width").startswith("800") or root.get("viewBox").endswith("800 600")


def test_pdf_has_a_page_with_text(heat_widget, tmp_path):
    out = export_widget(heat_widget, tmp_path / "f.pdf", ExportOptions(width=800, height=600, caption="caption here"))
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and b"/Type /Page" in data
    assert b"/Font" in data  # embedded text, not a bitmap of it


def test_png_matches_the_on_screen_widget(heat_widget):
    heat_widget.resize(500, 400)
    heat_widget.show()
    pg.QtWidgets.QApplication.processEvents()
    screen = heat_widget.grab().toImage().convertToFormat(pg.QtGui.QImage.Format_RGB32)
    exported = render_image(heat_widget, ExportOptions(width=500, height=400)).convertToFormat(pg.QtGui.QImage.Format_RGB32)
    b = np.asarray(_to_array(exported), dtype=float)
    a = np.asarray(_to_array(screen), dtype=float)
    assert a.shape == b.shape
    assert np.abs(a - b).mean() < 3.0  # same drawing code: at most antialiasing differences


def _to_array(qimg):
    w, h = qimg.width(), qimg.height()
    ptr = qimg.constBits()
    arr = np.frombuffer(ptr, dtype=np.uint8, count=qimg.sizeInBytes()).reshape(h, qimg.bytesPerLine())
    return arr[:, : w * 4].reshape(h, w, 4)[:, :, :3].copy()


def test_failed_export_keeps_the_existing_file(heat_widget, tmp_path, monkeypatch):
    target = tmp_path / "f.png"
    target.write_bytes(b"previous figure")
    import attnviz.figures.render as render

    def broken(tmp, payload):
        with open(tmp, "wb") as fh:
            fh.write(b"half a fi")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render, "_write_payload", broken)
    with pytest.raises(AttnvizError, match="no space left on the device"):
        export_widget(heat_widget, target, ExportOptions(width=100, height=100))
    assert target.read_bytes() == b"previous figure"
    assert [p.name for p in tmp_path.iterdir()] == ["f.png"]  # no partial file left behind


@pytest.mark.parametrize("name, fragment", [("f.gif", "png, .svg or .pdf"), ("missing/f.png", "does not exist")])
def test_bad_targets_are_refused(heat_widget, tmp_path, name, fragment):
    with pytest.raises(AttnvizError, match=fragment):
        export_widget(heat_widget, tmp_path / name)


def test_absurd_size_is_refused(heat_widget, tmp_path):
    with pytest.raises(AttnvizError, match="out of range"):
        export_widget(heat_widget, tmp_path / "f.png", ExportOptions(width=0, height=10))


def test_the_file_dpi_does_not_change_the_drawing(qtbot):
    # labels are measured at the screen's DPI; painted at the file's 150 dpi they came out 1.56× wider
    # than their boxes and were cut ("anima"). The dpi is metadata: the pixels must not depend on it.
    from attnviz.gui.views.rollout_view import RolloutView
    from attnviz.bench.traces import sample_trace
    from attnviz.selection import Selection

    view = RolloutView(selection=Selection())
    qtbot.addWidget(view)
    view.set_trace(sample_trace("encoder", T=9, grad=True))
    images = [render_image(view, ExportOptions(width=1200, height=700, dpi=dpi)) for dpi in (96, 150, 300)]
    assert images[0] == images[1] == images[2]
    assert [round(im.dotsPerMeterX() * 0.0254) for im in images] == [96, 150, 300]


def test_slides_enlarge_the_screen_layout():
    from attnviz.figures.render import layout_scale

    assert layout_scale(800, 500) == 1.0  # small figures: as on screen
    assert layout_scale(1920, 1080) == pytest.approx(1.8)  # a 16:9 slide: labels 1.8× larger
    assert layout_scale(4000, 700) == pytest.approx(700 / 600)  # the tighter side decides
