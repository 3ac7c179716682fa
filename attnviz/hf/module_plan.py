"""One walk over a model's modules, kept per model while its module tree is unchanged (issue 34: capture cost).

Every capture used to walk the whole module tree five times (qualified names, attention modules, training
flags, parents of the block recorder, the eager-attention switch): ~1,700 generator steps on a 30-layer model,
a fixed cost of every capture however short. :func:`module_plan` walks once and keeps the result beside the
model (a weak map: the model gets no attribute), and each later capture checks the kept plan against a
*fingerprint* of the tree — every (attribute name, module identity, module type) in walking order, read from
``_modules`` directly (~0.1 ms) — so a module added, replaced, removed or renamed (a user's surgery between two
captures) gives a new plan, never a stale one.
"""

from __future__ import annotations

import weakref

from torch import nn

__all__ = ["ModulePlan", "module_plan"]


class ModulePlan:
    """What the recorders read of a model's module tree, in ``model.modules()`` order.

    The plan holds every module below the model but not the model itself (it is kept in a weak map keyed by
    the model: a strong reference from the value would keep the model alive forever); the methods take the
    model back as their argument.
    """

    def __init__(self, model: nn.Module):
        named = list(model.named_modules())[1:]  # the root first, always: left out (class doc)
        self._below = [m for _, m in named]
        self.names = {id(model): "", **{id(m): n for n, m in named}}  # id(module) → qualified name
        self._parents = {id(c): m for m in self._below for c in m.children()}
        self._root_children = [id(c) for c in model.children() if id(c) not in self._parents]
        self._selected: dict = {}

    def modules(self, model: nn.Module) -> list:
        """Every module, each once, as ``model.modules()`` yields them."""
        return [model, *self._below]

    def parents(self, model: nn.Module) -> dict:
        """id(child) → its parent module (the last parent met, as ``{id(c): m for m in model.modules() for c in
        m.children()}`` builds it)."""
        return {**{i: model for i in self._root_children}, **self._parents}

    def select(self, model: nn.Module, key, predicate) -> list:
        """The modules for which ``predicate(module)`` holds, in order; the walk below the root done once per plan
        for each ``key``."""
        below = self._selected.get(key)
        if below is None:
            below = self._selected[key] = [m for m in self._below if predicate(m)]
        return ([model] if predicate(model) else []) + below


def _fingerprint(model: nn.Module) -> tuple:
    """Every (name, identity, type) of the tree below ``model`` in depth-first order, duplicates included: two
    trees with the same fingerprint are the same objects in the same places under the same names."""
    out, stack = [], [model]
    while stack:
        node = stack.pop()
        children = node._modules  # the registry nn.Module keeps its children in (what named_modules reads)
        for name, child in children.items():
            if child is not None:
                out.append((name, id(child), type(child)))
        stack.extend(c for c in reversed(children.values()) if c is not None)
    return tuple(out)


# model → (fingerprint, plan)
_PLANS: "weakref.WeakKeyDictionary[nn.Module, tuple]" = weakref.WeakKeyDictionary()


def module_plan(model: nn.Module) -> ModulePlan:
    """The model's :class:`ModulePlan`: the kept one while the module tree's fingerprint is unchanged."""
    print_ = _fingerprint(model)
    kept = _PLANS.get(model)
    if kept is not None and kept[0] == print_:
        return kept[1]
    plan = ModulePlan(model)
    _PLANS[model] = (print_, plan)
    return plan
