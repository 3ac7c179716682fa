"""Exceptions the CLI turns into one-line messages (exit 2) and the GUI into visible notices."""

__all__ = ["AttnvizError", "InputError", "ModelLoadError"]


class AttnvizError(Exception):
    """Base class: a problem the user can fix, with a message meant for them."""


class InputError(AttnvizError):
    """Bad text, image or numbers given as input."""


class ModelLoadError(AttnvizError):
    """A model name or directory that cannot be loaded."""
