"""attnviz: look inside small transformers, and export what you see for a lecture."""

__version__ = "0.1.0"
__all__ = ["__version__"]
