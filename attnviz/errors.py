"""Exceptions the CLI turns into one-line messages (exit 2) and the GUI into visible notices."""

__all__ = ["AttnvizError", "InputError", "ModelLoadError", "Message"]


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


class Message(str):
    """A one-line message for the user that keeps the long version of its error (``details``).

    It is the message itself (a ``str``), so everything that shows one line keeps working; a notice
    with a "Details…" button reads ``details``. Never a traceback: only what the error chose to say.
    """

    def __new__(cls, text: str, details: str = ""):
        obj = super().__new__(cls, text)
        obj.details = details if details and details.strip() != str(text).strip() else ""
        return obj

    @classmethod
    def of(cls, exc: BaseException) -> "Message":
        """The message of ``exc``, with its ``details`` when it is an :class:`AttnvizError`."""
        return cls(str(exc), exc.details if isinstance(exc, AttnvizError) else "")
