"""Exceptions the CLI turns into one-line messages (exit 2) and the GUI into visible notices."""

__all__ = ["AttnvizError", "InputError", "ModelLoadError"]


class AttnvizError(Exception):
    """Base class: a problem the user can fix, with a message meant for them.

    The message is one line (a notice, a CLI error); ``details`` may hold more (every mismatching weight,
    say) for a "details" button. It defaults to the message.
    """

    @property
    def details(self) -> str:
        return self.__dict__.get("_details") or str(self)

    @details.setter
    def details(self, text: str) -> None:
        self.__dict__["_details"] = text


class InputError(AttnvizError):
    """Bad text, image or numbers given as input."""


class ModelLoadError(AttnvizError):
    """A model name or directory that cannot be loaded."""
