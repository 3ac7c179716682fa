"""Image input for vision models: open a file, drop it, paste it, or pick a bundled sample.

Decoding happens in the worker (``attnviz.vision.preprocess.load_image``), so an undecodable file
becomes a notice, not a frozen window. An image sent to the model is *pending* until its trace arrives
(:meth:`ImageInput.set_preview`): only then do ``current`` and the caption name it. A rejected image
(:meth:`ImageInput.reject_pending`: unreadable, too large) leaves the picture, the caption and ``current``
of the image still on screen, so no caption ever names a file over another file's picture.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import (QBoxLayout, QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QSizePolicy,
                               QWidget)

from attnviz.gui.image_arrays import array_to_qimage, qimage_to_array

__all__ = ["ImageInput", "IMAGE_FILTER"]

IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.bmp *.gif *.tif *.tiff *.webp);;All files (*)"
PREVIEW = 168  # px: large enough to see the patches of a 32 px image at a glance
EMPTY_TEXTS = ("no image", "no\nimage", "none")  # the preview before any image, the first that fits its box
COMPACT_PREVIEW = 36  # px in a compact window (1280×720): a button's height, so the dock is one line (72 px
# under two rows left the head map's figure under half the window)


class ImageInput(QWidget):
    """Emits ``image_submitted(path_or_array)``; ``notice(text)`` for things the user should know."""

    image_submitted = Signal(object)
    notice = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.preview = QLabel("no image", self)
        self.preview.setFixedSize(PREVIEW, PREVIEW)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.preview.setFrameShape(QLabel.Shape.StyledPanel)
        self.preview.setToolTip("What the model sees (resized to its input size). Drop an image here.")
        self.open_button = QPushButton("Open image…", self)
        self.open_button.setToolTip("Open an image file (Ctrl+Shift+O); drag and drop works too")
        self.open_button.clicked.connect(self.open_dialog)
        self.paste_button = QPushButton("Paste", self)
        self.paste_button.setToolTip("Use the image on the clipboard")
        self.paste_button.clicked.connect(self.paste)
        self.samples = QComboBox(self)
        self.samples.setToolTip("Bundled sample images")
        self.samples.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.samples.activated.connect(self._sample_chosen)
        self.caption = QLabel("", self)
        self.caption.setWordWrap(True)
        self.caption.setToolTip("The image the model is looking at now")
        font = self.caption.font()
        font.setBold(True)
        self.caption.setFont(font)
        self.caption.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        # the sources side by side at their natural width (stretched, they filled a 1600-px row),
        # the caption of what is shown under them
        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addWidget(self.paste_button)
        row.addSpacing(12)
        row.addWidget(QLabel("Sample:", self))
        row.addWidget(self.samples)
        row.addStretch(1)
        buttons = self._buttons = QBoxLayout(QBoxLayout.Direction.TopToBottom)  # caption beside them when compact
        buttons.addLayout(row)
        buttons.addWidget(self.caption)
        buttons.addStretch(1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.preview)
        lay.addLayout(buttons, 1)
        self.current: object = None  # the image on screen (what the views show)
        self.pending: tuple | None = None  # (image, caption) sent to the model, not answered yet
        self.set_samples({})

    # -- sources ---------------------------------------------------------------------------------
    def set_samples(self, samples: dict[str, str]) -> None:
        """Bundled samples (``attnviz.vision.samples.sample_images()``: name → path)."""
        self.samples.clear()
        self.samples.addItem("choose…", None)
        for name, path in samples.items():
            self.samples.addItem(name, str(path))
        self.samples.setEnabled(bool(samples))

    def _sample_chosen(self, index: int) -> None:
        path = self.samples.itemData(index)
        if path:
            self.submit(path, caption=self.samples.itemText(index))

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open image", "", IMAGE_FILTER)
        if path:
            self.submit(path)

    def paste(self) -> None:
        mime = QGuiApplication.clipboard().mimeData()
        if mime is not None and mime.hasImage():
            img = QImage(mime.imageData())
            if not img.isNull():
                self.submit(qimage_to_array(img), caption="pasted image")
                return
        if mime is not None and mime.hasUrls() and mime.urls()[0].isLocalFile():
            self.submit(mime.urls()[0].toLocalFile())
            return
        self.notice.emit("the clipboard holds no image")

    def submit(self, image, caption: str | None = None) -> None:
        """Send an image (path or array) to the model; it becomes ``current`` when its trace arrives."""
        if caption is None and image is self.current and self.caption.text():
            caption = self.caption.text()  # the same picture again (a reloaded model): the same name
        if caption is None:
            caption = Path(image).name if isinstance(image, (str, Path)) else "image"
        self.pending = (image, caption)
        self.image_submitted.emit(str(image) if isinstance(image, Path) else image)

    def reject_pending(self) -> None:
        """The model could not read the image sent last: keep what is on screen, named as it was."""
        self.pending = None

    # -- what the model saw -------------------------------------------------------------------------
    def set_preview(self, shown) -> None:
        """Show the preprocessed image (S, S, C) in [0, 1]; nearest-neighbour so pixels stay visible.

        The image sent last is now the one on screen: ``current`` and the caption name it."""
        if self.pending is not None:
            self.current, caption = self.pending
            self.pending = None
            self.caption.setText(caption)
        self._shown = QPixmap.fromImage(array_to_qimage(shown))
        self._draw_preview()

    def set_compact(self, on: bool) -> None:
        """A smaller preview in a compact window (the head map's axes name the patches)."""
        side = COMPACT_PREVIEW if on else PREVIEW
        self.preview.setFixedSize(side, side)
        self._fit_empty_text()
        self._buttons.setDirection(QBoxLayout.Direction.LeftToRight if on else QBoxLayout.Direction.TopToBottom)
        self.caption.setWordWrap(not on)  # one line beside the buttons
        self._draw_preview()

    def _fit_empty_text(self) -> None:
        """"no image" whole in the preview's box: on two lines, or "none", in a compact window's 36 px (issue
        36: the box read "o imag", both ends cut)."""
        box = self.preview.contentsRect().adjusted(2, 2, -2, -2)
        metrics = self.preview.fontMetrics()
        for text in EMPTY_TEXTS:
            need = metrics.boundingRect(box, int(Qt.AlignmentFlag.AlignCenter), text)
            if need.width() <= box.width() and need.height() <= box.height():
                break
        self.preview.setText(text)  # (this drops a pixmap: set_compact draws the image again after it)

    def _draw_preview(self) -> None:
        pix = getattr(self, "_shown", None)
        if pix is not None:
            side = self.preview.width()
            self.preview.setPixmap(pix.scaled(side - 4, side - 4, Qt.AspectRatioMode.KeepAspectRatio,
                                              Qt.TransformationMode.FastTransformation))

    # -- drag and drop ------------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        mime = event.mimeData()
        if mime.hasImage() or (mime.hasUrls() and mime.urls()[0].isLocalFile()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        mime = event.mimeData()
        if mime.hasUrls() and mime.urls()[0].isLocalFile():
            self.submit(mime.urls()[0].toLocalFile())
        elif mime.hasImage():
            self.submit(qimage_to_array(QImage(mime.imageData())), caption="dropped image")
        event.acceptProposedAction()
