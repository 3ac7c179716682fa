"""The words over and under the data-set view's grid: a one-line title naming the score and the part, and a
caption with the rest (the model, the data, the colour scale, what is hatched, a score not defined here).

One long title wrapped to six lines in the right dock at 1280×720 and pushed both maps out of view."""

from __future__ import annotations

from attnviz.gui.views.dataset_widgets import PART_TITLES

__all__ = ["grid_words"]


def grid_words(result, score: str, part: str, label, *, held_out: bool, failure: str, chosen_for,
               how: str, undefined) -> tuple[str, str]:
    """(title, caption) of the grid showing ``score`` for ``part``.

    ``label(name)`` is a score's name as shown; ``held_out`` whether the inputs are the task's own; ``chosen_for``
    (asked-for label, score, part) when the asked-for score is not defined for this part and ``score`` was chosen
    instead; ``how`` the colour scale's words ("" when a colour bar says it); ``undefined`` the (L, H) mask of
    heads the score is not defined for."""
    two = len(result.parts) > 1  # beside the encoder's, "self-attention" says too little:
    where = "decoder self-attention" if part == "self" and two else PART_TITLES.get(part, part)
    name = label(score)
    if undefined.all():  # e.g. previous-token on cross-attention: say which scores apply
        defined = [label(n) for n in result.score_names(part)]
        return (f"{name.capitalize()} is not defined for {where}",
                f"choose {', '.join(defined)}" if defined else "")
    counts = result.counts[part].get(score)
    n_used = int(counts.max()) if counts is not None and counts.size else 0
    data = (f"{n_used} repeated random sequences" if score == "induction" and result.meta.get("n_repeated")
            else f"{result.n_inputs} {'held-out ' if held_out else ''}inputs")
    model = result.meta.get("model") or ""
    if result.meta.get("note") == "the current input only":  # the reason names the model where it matters
        data, model = f"the input on screen only · {failure}", ""
    instead = f"The {chosen_for[0]} is not defined for {where}, so the {name} is shown. " \
        if chosen_for and chosen_for[1:] == (score, part) else ""
    caption = instead + (f"{model} · " if model else "") + data + how + ("; hatched: not defined" if undefined.any() else "")
    return f"{name.capitalize()} per head ({where})", caption
