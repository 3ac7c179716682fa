"""Pages of sample traces opened in a browser window of a given size, for the browser tests."""

from __future__ import annotations

from attnviz.bench.traces import sample_trace


def sample_page(kind: str, view: str, **shape) -> str:
    """The interactive page of ``sample_trace(kind, **shape)`` opening on ``view``, in the export's colours."""
    from attnviz.export.html_page import html_page
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    page, _meta = html_page(sample_trace(kind, **shape), colour_lut(export_style(colormap="viridis")), view=view)
    return page


def open_in_window(context_with, path, text: str, size, init_script: str | None = None):
    """``text`` written to ``path`` and opened in a ``size`` window, painted; script errors in ``page.errors``."""
    path.write_text(text, encoding="utf-8")
    page = context_with(viewport={"width": size[0], "height": size[1]}).new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    if init_script:
        page.add_init_script(init_script)
    page.goto(path.as_uri())
    page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=30000)
    return page


def open_in_notebook(context_with, path, text: str):
    """``text`` in a notebook's iframe (``iframe_srcdoc``, 900 px wide) in a 1920 × 1080 window, ready; the frame."""
    from attnviz.export.html_page import iframe_srcdoc

    path.write_text(f"<!doctype html><html><body>{iframe_srcdoc(text, 900)}</body></html>", encoding="utf-8")
    page = context_with(viewport={"width": 1920, "height": 1080}).new_page()
    page.goto(path.as_uri())
    frame = page.frame_locator("iframe")
    frame.locator("body[data-ready='1']").wait_for(timeout=30000)
    return frame
