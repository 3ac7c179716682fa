"""``attnviz export --view head-map|model|token-lines -o figure.html``: the interactive page from the CLI.

The page itself is Qt-free (:mod:`attnviz.export.html_page`); this module only hands it the app's
colour lookup table for the export style, the model view's head statistics and the export renderer's
still picture for where scripts cannot run, so its colours and numbers are the app's and the PNG export's.
"""

from __future__ import annotations

from pathlib import Path

from attnviz.export.html_page import HTML_VIEWS, html_page, save_page

__all__ = ["is_html", "check_html_args", "export_html"]


def is_html(path) -> bool:
    return bool(path) and Path(path).suffix.lower() in (".html", ".htm")


def check_html_args(args) -> None:
    """One line, before the model loads, for what the page cannot do."""
    from attnviz.errors import AttnvizError

    if args.view not in HTML_VIEWS:
        raise AttnvizError(f"an interactive .html figure shows {', '.join(HTML_VIEWS)}; export {args.view} "
                           "to .png, .svg or .pdf")
    if args.all_heads or args.all_layers:
        raise AttnvizError("the .html page holds every layer and head already: leave out --all-heads/--all-layers")


def export_html(path, view: str, trace, state, style) -> tuple[Path, dict]:
    """Write the page opening on ``view`` at ``state``'s part, layer and head; (path, page metadata)."""
    from attnviz.export.html_fallback import fallback_picture
    from attnviz.gui.style import colour_lut
    from attnviz.gui.views.model_summary import summarize_stats

    page, meta = html_page(trace, colour_lut(style), view=view, layer=state.layer, head=state.head,
                           part=state.part, style=style, head_stats=summarize_stats,
                           fallback=lambda m: fallback_picture(trace, state, style, m))
    return save_page(path, page), meta
