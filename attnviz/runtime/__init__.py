"""The runtime layer: models of every kind enter through one adapter protocol and leave as Traces.

- :mod:`attnviz.runtime.adapter` — the :class:`ModelAdapter` protocol (load, describe, prepare, capture)
- :mod:`attnviz.runtime.native` — attnviz's own checkpoints; tasks supply their input rules
- :mod:`attnviz.runtime.huggingface` — Hugging Face folders (optional extra)
- :mod:`attnviz.runtime.pipeline` — name or folder → LoadedModel; input → Trace
- :mod:`attnviz.runtime.batch_scores`, :mod:`~attnviz.runtime.dataset_inputs`, :mod:`~attnviz.runtime.qk_collect` — many inputs
  at once: head scores and the joint query–key data of a data set
"""

from attnviz.capture.prepared import Prepared
from attnviz.runtime.adapter import ModelAdapter
from attnviz.runtime.native import task_of
from attnviz.runtime.pipeline import (
    ADAPTERS,
    adapter_for,
    describe_model,
    load_model,
    prepare_image,
    prepare_text,
    run_trace,
)

__all__ = ["ADAPTERS", "ModelAdapter", "Prepared", "adapter_for", "describe_model", "load_model",
           "prepare_image", "prepare_text", "run_trace", "task_of"]
