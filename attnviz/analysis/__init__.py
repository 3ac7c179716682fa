"""Analyses of a Trace: rollout, gradient rollout, PCA, positional similarity, distances, six steps (Qt-free).

Numpy in, numpy out. Each function takes arrays (or a Trace) and returns arrays or a small dataclass;
views draw the results, the CLI prints them.
"""

from attnviz.analysis.distance import attention_entropy, mean_attention_distance
from attnviz.analysis.pca import compute_embedding_pca, compute_filter_pca
from attnviz.analysis.permutation import compare_permuted, permutation_matrix
from attnviz.analysis.positional import patch_position_similarity, positional_similarity
from attnviz.analysis.relevance import compute_grad_rollout
from attnviz.analysis.rollout import compute_rollout
from attnviz.analysis.steps import MatrixForm, SixSteps, compute_matrix_form, compute_six_steps

__all__ = [
    "compute_rollout",
    "compute_grad_rollout",
    "compute_filter_pca",
    "compute_embedding_pca",
    "positional_similarity",
    "patch_position_similarity",
    "mean_attention_distance",
    "attention_entropy",
    "compute_six_steps",
    "compute_matrix_form",
    "SixSteps",
    "MatrixForm",
    "compare_permuted",
    "permutation_matrix",
]
