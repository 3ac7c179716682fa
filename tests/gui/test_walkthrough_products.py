"""Products written on the walkthrough's slides check on a calculator (split from test_layout_audit.py)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("x, factor", [(18.171875, 0.25), (-3.14159, 0.1767766952966369), (0.00012, 0.125)])
def test_products_on_slides_check_on_a_calculator(x, factor):
    """The shown operands multiply to the shown result (what a student types into a calculator)."""
    from attnviz.gui.walkthrough.number_format import MINUS, product_text

    text = product_text(x, factor).replace(MINUS, "-")
    a, rest = text.split(" × ")
    k, r = rest.split(" = ")
    assert f"{float(a) * float(k):.4f}" == r
    assert abs(float(r) - x * factor) < 1e-4  # and within the last digit of the model's value
