"""The sentence a text model without an example of its own runs on (a Hugging Face folder, say).

One place, so the app and the CLI open such a model on the same input: the lecture's own sentence.
"""

__all__ = ["FALLBACK_TEXT"]

FALLBACK_TEXT = "The animal didn't cross the street because it was too tired"
