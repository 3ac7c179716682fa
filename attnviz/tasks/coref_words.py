"""The words of the coref sentences: nouns, the adjectives that decide the referent, verbs, templates.

Their own module so that :mod:`attnviz.tasks.coref` (the task) and :mod:`attnviz.tasks.coref_metrics`
(its head measures) both read them without importing each other (issue 39 item 7: the circle they made).
"""

from __future__ import annotations

__all__ = ["ANIMATE", "PLACES", "ANIMATE_ADJ", "PLACE_ADJ", "VERBS", "TEMPLATES"]

ANIMATE = ["animal", "dog", "cat", "horse", "cow", "sheep", "goat", "fox", "deer", "rabbit", "child", "boy",
           "girl", "man", "woman", "farmer", "soldier", "tourist", "donkey", "pig", "bear", "wolf", "mouse",
           "duck"]
PLACES = ["street", "road", "river", "bridge", "field", "hill", "valley", "lake", "path", "track", "square",
          "park", "forest", "desert", "canal", "highway", "stream", "lane", "yard", "beach", "mountain",
          "tunnel", "garden", "ditch"]
ANIMATE_ADJ = ["tired", "scared", "lazy", "weak", "sleepy", "afraid", "hungry", "old", "slow", "nervous", "sick",
               "timid", "exhausted", "frightened", "injured", "cautious"]
PLACE_ADJ = ["wide", "busy", "long", "steep", "icy", "wet", "narrow", "dangerous", "crowded", "deep", "muddy",
             "slippery", "dark", "far", "rough", "flooded"]
VERBS = [("cross", "crossed"), ("climb", "climbed"), ("enter", "entered"), ("reach", "reached"),
         ("leave", "left"), ("pass", "passed"), ("explore", "explored"), ("visit", "visited"), ("use", "used"),
         ("follow", "followed"), ("approach", "approached"), ("search", "searched")]
# {a}: the animate noun, {p}: the place, {v}/{vpp}: verb and participle, {adj}: the deciding adjective
TEMPLATES = [
    "the {a} didn't {v} the {p} because it was too {adj}",
    "the {a} did not {v} the {p} as it was too {adj}",
    "the {p} was not {vpp} by the {a} because it was too {adj}",
    "the {a} refused to {v} the {p} since it was so {adj}",
    "the {p} wasn't {vpp} by the {a} since it was very {adj}",
]
