"""Every claim kind a lesson can name has its parameters declared (a kind without them would refuse every
scene that uses it, or take unchecked values), and every parameter a claim reads is declared."""

import ast
import inspect

from attnviz.lessons import claims
from attnviz.lessons.claim_params import CLAIM_PARAMS


def test_every_claim_kind_declares_its_parameters():
    assert set(CLAIM_PARAMS) == set(claims.CLAIMS)


def test_every_parameter_a_claim_reads_is_declared():
    for kind, fn in claims.CLAIMS.items():
        tree = ast.parse(inspect.getsource(inspect.getmodule(fn)))
        func = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == fn.__name__)
        read = {n.args[0].value for n in ast.walk(func)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
                and isinstance(getattr(n.func.value, "id", None), str) and n.func.value.id == "p"
                and n.args and isinstance(n.args[0], ast.Constant)}
        assert read <= set(CLAIM_PARAMS[kind]), (kind, read - set(CLAIM_PARAMS[kind]))
