"""Image loading, preprocessing, patch grids (Qt-free).

Also here: ``shape_scenes`` (the shapes task's scene generator), ``pointing`` (the pointing game) and
``samples`` (bundled sample images), imported by name when needed.
"""

from attnviz.vision.preprocess import load_image, normalise, patch_labels, preprocess_image, to_model_mode

__all__ = ["load_image", "preprocess_image", "patch_labels", "normalise", "to_model_mode"]
