"""Image loading, preprocessing and patch grids (Qt-free)."""

from attnviz.vision.preprocess import load_image, patch_labels, preprocess_image

__all__ = ["load_image", "preprocess_image", "patch_labels"]
