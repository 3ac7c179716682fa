"""What the data-set views share: which model to run, and opening one input of the data set in the app.

The data-set views are views like the others (they receive the current Trace), but what they draw
comes from many inputs: they run a private copy of the model (``attnviz.runtime.model_copies``) on a
worker thread, found from the window's loaded model or the trace's model name.
"""

from __future__ import annotations

import numpy as np

__all__ = ["window_model_ref", "open_input_in_app", "describe_item"]


def window_model_ref(widget, trace) -> str | None:
    """The reference that loads the model ``trace`` came from (the app's model folder when there is one)."""
    from attnviz.runtime.model_copies import model_ref

    if trace is None:
        return None
    loaded = getattr(widget.window(), "loaded", None)
    if loaded is not None and loaded.name == trace.description.model_name:
        return model_ref(loaded=loaded)
    return model_ref(trace=trace)


def open_input_in_app(widget, item) -> bool:
    """Put ``item`` (text, image path or image array) into the window's input panel and run it, so
    every view shows it. False when the widget is not inside the app window (export, tests)."""
    panel = getattr(widget.window(), "input_panel", None)
    if panel is None:
        return False
    if isinstance(item, str) and not _is_image_path(item):
        panel.set_text(item, submit=True)
    else:
        panel.image.submit(item, caption="data set")
    return True


def _is_image_path(text: str) -> bool:
    from attnviz.runtime.dataset_inputs import IMAGE_SUFFIXES

    return text.lower().endswith(IMAGE_SUFFIXES)


def describe_item(item, width: int = 70) -> str:
    """One line naming an input: its text (shortened), image file name, or "image"."""
    if isinstance(item, np.ndarray):
        return f"image {item.shape[1]}×{item.shape[0]}"
    text = str(item).replace("\n", "⏎")
    if _is_image_path(text):
        return text.rsplit("/", 1)[-1]
    return text if len(text) <= width else text[: width - 1] + "…"
