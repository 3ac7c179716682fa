"""The interactive page for notebooks: shown inline (an ``<iframe srcdoc>``, offline), saved as one file.

A notebook shows the iframe where its output may run scripts (a trusted notebook); an untrusted one,
nbconvert's HTML or a code host's viewer shows the still PNG the bundle also carries (and, inside the
iframe, the page's ``<noscript>`` picture where scripts are off).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["HtmlFigure", "app_lut"]


def app_lut(colormap: str = "viridis", theme: str = "light"):
    """The app's colour lookup table (256×4 RGBA) and style for ``colormap``/``theme`` (as ``export``'s)."""
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    style = export_style(theme, colormap)
    return colour_lut(style), style


class HtmlFigure:
    """Head map (layer/head switching), all heads and token lines of a trace in one self-contained page."""

    def __init__(self, trace, view: str = "head-map", layer: int = 0, head: int = 0, part: str = "self",
                 colormap: str = "viridis", theme: str = "light", precision: str = "auto", max_bytes=None):
        from attnviz.export.html_data import MAX_BYTES
        from attnviz.export.html_fallback import fallback_picture
        from attnviz.export.html_page import html_page
        from attnviz.gui.views.model_summary import summarize_stats
        from attnviz.selection import SelectionState

        lut, style = app_lut(colormap, theme)
        state = SelectionState(layer=layer, head=head, part=part)
        self.page, self.meta = html_page(trace, lut, view=view, layer=layer, head=head, part=part,
                                         precision=precision, max_bytes=max_bytes or MAX_BYTES, style=style,
                                         head_stats=summarize_stats,
                                         fallback=lambda m: fallback_picture(trace, state, style, m))

    @property
    def notices(self) -> list[str]:
        """What the page pools or leaves out of a long input, as it says on top."""
        return list(self.meta["notices"])

    sources: dict = {}  # what the trace was made from (set by Traced.html): never written over

    def save(self, path, force: bool = False) -> Path:
        """Write the page (one .html file: open it offline, put it on a course page), by the CLI's output
        rules: never over a file attnviz did not write or into a model folder unless ``force=True``."""
        from attnviz.export.html_page import save_page
        from attnviz.io.outputs import api_output

        with api_output(path, force, **self.sources):
            return save_page(path, self.page)

    def _repr_html_(self) -> str:
        from attnviz.export.html_page import iframe_srcdoc

        return iframe_srcdoc(self.page, self.meta["height"])

    def _repr_mimebundle_(self, include=None, exclude=None):
        # text/html for a front end that runs it; image/png, the still picture, for one that may not (an
        # untrusted notebook prefers a safe type; nbconvert and code hosts keep both)
        import base64

        from attnviz.export.html_fallback import FALLBACK_SIZE

        bundle, md = {"text/html": self._repr_html_()}, {}
        if self.meta.get("fallback_png"):
            bundle["image/png"] = base64.b64encode(self.meta["fallback_png"]).decode("ascii")
            md["image/png"] = {"width": FALLBACK_SIZE[0]}
        return bundle, md

    def __repr__(self) -> str:
        return f"<attnviz.HtmlFigure {self.meta['view']!r}, {len(self.page) / 1e6:.2f} MB, {self.meta['precision']}>"
