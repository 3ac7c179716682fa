"""The job behind the "Heads over a data set" view: every head scored over many inputs, on a worker.

Qt-free: it runs on :func:`attnviz.gui.workers.run_job`'s thread with a private copy of the model, so the
GUI thread only queues it and draws its result.
"""

from __future__ import annotations

import threading

__all__ = ["score_dataset_job"]


def score_dataset_job(ref: str, n: int, progress, cancel, job_id: int = 0, corpus: str | None = None,
                      images: str | None = None) -> tuple:
    """Worker: score ``n`` inputs — the task's held-out data, or the first ``n`` lines of ``corpus`` /
    images of ``images`` — with the model ``ref`` (its private copy); returns (HeadScores, name of the
    thread it ran on, ``job_id``)."""
    from attnviz.runtime.batch_scores import N_REPEATED, score_heads, score_heads_by_trace
    from attnviz.runtime.dataset_inputs import (count_corpus_lines, dataset_batches, dataset_items, list_images,
                                                repeated_batches)
    from attnviz.runtime import adapter_for
    from attnviz.runtime.model_copies import MODEL_LOCK, private_model

    if corpus is not None:
        n = min(n, count_corpus_lines(corpus))
    elif images is not None:
        n = min(n, len(list_images(images)))
    with MODEL_LOCK:
        loaded = private_model(ref)
        if not adapter_for(loaded).batched:  # hooked (Hugging Face) models: one input at a time
            items = dataset_items(loaded, corpus=corpus, images=images, n=n)
            result = score_heads_by_trace(loaded, items, n, progress=progress, cancel=cancel)
        else:
            repeated = repeated_batches(loaded, N_REPEATED) if loaded.config.kind == "decoder" else None
            result = score_heads(loaded, dataset_batches(loaded, corpus=corpus, images=images, n=n), n,
                                 repeated=repeated, progress=progress, cancel=cancel)
    return result, threading.current_thread().name, job_id
