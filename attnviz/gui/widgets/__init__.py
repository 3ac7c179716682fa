"""Small graphics items the views share: colour bar, token axes, heatmap, hatching, token strip."""

from attnviz.gui.widgets.colour_bar import ColourBarItem
from attnviz.gui.widgets.hatch import HatchItem, mask_path
from attnviz.gui.widgets.heatmap import CellImageItem, LabelledHeatmap
from attnviz.gui.widgets.token_axis import TokenAxisItem, display_token
from attnviz.gui.widgets.value_token_row import TokenStripItem

__all__ = ["ColourBarItem", "HatchItem", "mask_path", "CellImageItem", "LabelledHeatmap", "TokenAxisItem",
           "display_token", "TokenStripItem"]
