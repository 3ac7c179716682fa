"""The export-stall benchmark runs end to end (its figures are printed by ``attnviz bench``, never asserted)."""

import math

from attnviz.bench.export_stall import measure_export_stalls


def test_export_stall_bench_exports_through_the_app(qtbot):
    out = measure_export_stalls(cases=(("head map", "views", "HeadMapView"),), formats=("svg",))
    keys = ["first notice (notice bar appears) max stall ms", "head map SVG max stall ms", "head map SVG wall ms", "head map copy max stall ms", "save scene wall ms"]
    assert all(isinstance(out[k], float) and math.isfinite(out[k]) for k in keys)
    # the notices' own stalls (first notice, a warning coming and going) are not the exports'
    assert out["export worst stall ms"] == max(v for k, v in out.items()
                                               if k.endswith("max stall ms") and "notice" not in k)
