"""The leaf layer: what every other layer needs and that needs nothing of theirs.

Atomic file writes, where the bundled assets live, and the guard against overwriting an input.
No torch, no Qt, no numpy at import time.
"""

from attnviz.io.assets import assets_dir, bundled_models, icon_path
from attnviz.io.atomic import write_atomic
from attnviz.io.paths import OverwriteError, refuse_overwrite

__all__ = ["assets_dir", "bundled_models", "icon_path", "write_atomic", "refuse_overwrite", "OverwriteError"]
