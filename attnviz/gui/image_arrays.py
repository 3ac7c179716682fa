"""Numpy image arrays to and from QImage: the image input's preview and paste, the dataset view's thumbnails.

Below both, so a view need not import a panel for them; a module of its own (not in ``gui/widgets``, whose
package imports pyqtgraph), since the window's image input is built before pyqtgraph is imported.
"""

from __future__ import annotations

from PySide6.QtGui import QImage

__all__ = ["array_to_qimage", "qimage_to_array"]


def array_to_qimage(arr) -> QImage:
    """(H, W[, C]) array (uint8, or floats in [0, 1]) → a QImage that owns its pixels."""
    import numpy as np

    a = np.asarray(arr)
    if a.dtype != np.uint8:
        a = (np.clip(a.astype(np.float32), 0, 1) * 255).round().astype(np.uint8)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    a = np.ascontiguousarray(a)
    h, w = a.shape[:2]
    if a.ndim == 2:
        return QImage(a.data, w, h, w, QImage.Format.Format_Grayscale8).copy()
    if a.shape[2] == 4:
        return QImage(a.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()
    return QImage(a[:, :, :3].copy().data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


def qimage_to_array(img: QImage):
    """A QImage (e.g. from the clipboard) → (H, W, 3) uint8 array."""
    import numpy as np

    rgb = img.convertToFormat(QImage.Format.Format_RGB888)
    h, w, stride = rgb.height(), rgb.width(), rgb.bytesPerLine()
    buf = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=stride * h).reshape(h, stride)  # rows padded
    return buf[:, : 3 * w].reshape(h, w, 3).copy()
