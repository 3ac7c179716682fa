"""Image loading, preprocessing, patch grids, generated shape scenes and bundled samples (Qt-free)."""

from attnviz.vision.preprocess import load_image, normalise, patch_labels, preprocess_image, to_model_mode
from attnviz.vision.samples import sample_images, sample_path

__all__ = ["load_image", "preprocess_image", "patch_labels", "normalise", "to_model_mode", "sample_images",
           "sample_path"]
