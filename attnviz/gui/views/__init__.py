"""The attention views: each draws a Trace, follows one Selection and can render itself for export.

See :mod:`attnviz.gui.views.base` for the contract every view keeps.
"""

from attnviz.gui.views.attention_distance_view import AttentionDistanceView
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.filter_pca_view import FilterPCAView
from attnviz.gui.views.head_map_view import HeadMapView
from attnviz.gui.views.model_view import ModelView
from attnviz.gui.views.position_similarity_view import PositionSimilarityView
from attnviz.gui.views.positional_encoding_view import PositionalEncodingView
from attnviz.gui.views.rollout_view import RolloutView
from attnviz.gui.views.token_embedding_view import TokenEmbeddingView
from attnviz.gui.views.token_lines_view import TokenLinesView

__all__ = [
    "BaseView",
    "HeadMapView",
    "ModelView",
    "TokenLinesView",
    "RolloutView",
    "FilterPCAView",
    "PositionSimilarityView",
    "AttentionDistanceView",
    "TokenEmbeddingView",
    "PositionalEncodingView",
    "VIEW_CLASSES",
]

VIEW_CLASSES = (HeadMapView, ModelView, TokenLinesView, RolloutView, FilterPCAView, PositionSimilarityView,
                AttentionDistanceView, TokenEmbeddingView, PositionalEncodingView)
