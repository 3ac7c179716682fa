"""coref-emergent: trained on the answers alone (no attention term in its loss), and the per-row deletion
measure of coref_metrics recomputed by a plain loop."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.tasks import get_task
from attnviz.tasks.base import IGNORE
from attnviz.tasks.coref_metrics import head_profile


def _loaded(task, seed=0):
    torch.manual_seed(seed)
    model = build_model(task.model_config())
    task.prepare_model(model)
    return LoadedModel(model, model.cfg, {"task": task.name, "labels": task.labels}, task.tokenizer,
                       device=torch.device("cpu"), extra={"task_obj": task})


def test_loss_is_the_answer_loss_alone():
    """Negative control beside it: the supervised coref task's loss on the same batch is larger (its pointer term)."""
    emergent, supervised = get_task("coref-emergent"), get_task("coref")
    assert emergent.model_config().n_heads == 1 and emergent.pointer_head == -1
    batch = emergent.sample_batch("train", 16, np.random.default_rng(0))
    for task, extra in ((emergent, False), (supervised, True)):
        loaded = _loaded(task)
        loaded.model.train()
        logits = loaded.model(**batch.inputs)
        loss, _, _ = task.loss(logits, batch)
        plain = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.targets.reshape(-1), ignore_index=IGNORE)
        loss, plain = loss.detach(), plain.detach()
        assert (float(loss) > float(plain) + 1e-3) if extra else torch.allclose(loss, plain)


def test_deleted_row_max_by_a_plain_loop():
    task = get_task("coref-emergent")
    loaded = _loaded(task, seed=3)
    loaded.model.eval()
    items = task.sentences("val", 6, np.random.default_rng(5))
    prof = head_profile(loaded, task, items)
    want = np.zeros_like(prof["deleted_row_max"])
    from attnviz.capture.batch import batch_attention

    for text, ref in items:
        tokens = task.tokenizer.prefix + text.split()
        i = tokens.index("it")
        gone = tokens[:i] + tokens[i + 1:]
        r = gone.index(ref)
        ids = torch.tensor([[task.tokenizer.index[t] for t in gone]])
        _, probs = batch_attention(loaded.model, {"ids": ids, "pool_index": torch.tensor([0])})
        for layer, p in enumerate(probs["self"]):
            for head in range(p.shape[1]):
                for row in range(len(gone)):
                    if row != r:
                        want[layer, head] = max(want[layer, head], float(p[0, head, row, r]))
    np.testing.assert_allclose(prof["deleted_row_max"], want, atol=1e-6)
