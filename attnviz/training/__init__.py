"""Training: the progress-event loop, its schedule, attention snapshots and bundled-model building."""

from attnviz.training.loop import Progress, train
from attnviz.training.snapshots import Snapshots, load_snapshots

__all__ = ["Progress", "train", "Snapshots", "load_snapshots"]
