"""attnviz from Python: load a model, trace an input, draw any export view — in a notebook or a script.

The same pipeline as the command line and the app (``attnviz.runtime``: adapter → Trace) and the same
renderer as ``attnviz export`` (``attnviz.export.batch``), so a figure shown in Jupyter is the file
``export`` writes. Heavy libraries (torch, Qt) load when first needed, not at ``import attnviz``.

>>> import attnviz
>>> model = attnviz.load("coref")                      # a bundled name (attnviz.models()), a folder, a model object
>>> attnviz.load(hf_model, tokenizer=tok)               # a transformers model in memory, left as it was
>>> attnviz.from_attentions(out.attentions, tokens)     # BertViz's / CircuitsVis' inputs: probabilities only
>>> attnviz.compare(t1, t2, "head-map")                 # two traces, one colour scale, and their difference
>>> t = model.trace("The animal didn't cross the street because it was too tired")
>>> t["L1.probs"].shape                                 # the trace's arrays, by name, as numpy
>>> t.figure("head-map", layer=1, head=0)               # shows itself in Jupyter; attnviz.views() lists views
>>> t.figure("model").save("heads.pdf", size=(1600, 1200))
>>> t.html("token-lines").save("lines.html")            # interactive, self-contained, offline
"""

from attnviz.api.catalog import models, views
from attnviz.api.compare import compare
from attnviz.api.figure import Figure
from attnviz.api.from_attentions import from_attentions
from attnviz.api.html_figure import HtmlFigure
from attnviz.api.model import Model, load
from attnviz.api.traced import Traced, open_trace

__all__ = ["Figure", "HtmlFigure", "Model", "Traced", "compare", "from_attentions", "load", "models",
           "open_trace", "views"]
