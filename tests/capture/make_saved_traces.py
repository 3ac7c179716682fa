"""Write the saved-trace fixtures of ``test_saved_traces.py``: one small trace per trace source, saved by the code
of the time (run with that checkout first on PYTHONPATH). The files are committed: they are what an older attnviz
saved, and every later attnviz must still open them with the same description.

    PYTHONPATH=/path/to/old/checkout:$PWD python -m tests.capture.make_saved_traces OUT_DIR
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch


def sources(tmp: Path):
    """name → a zero-argument function returning a Trace (tiny seeded models: every source of traces)."""
    from attnviz.capture import capture
    from tests.models.tiny import build_tiny, make_inputs

    def native(kind, **kw):
        def make():
            model = build_tiny(kind, **kw)
            inputs, tokens = make_inputs(model)
            return capture(model, inputs, tokens, meta={"input_text": "x y", "model_name": f"tiny-{kind}"})
        return make

    def hf(family, **kw):
        def make():
            from attnviz.hf.loader import load_hf_model
            from tests.hf.factories import make_model, trace_of

            loaded = load_hf_model(make_model(family, tmp / family, seed=3), device="cpu")
            return trace_of(loaded, **kw)[0]
        return make

    def encdec(attention):
        def make():
            from attnviz.hf.encdec_capture import capture_encdec
            from attnviz.hf.encdec_inputs import prepare_encdec_text
            from attnviz.hf.loader import load_hf_model
            from tests.hf_encdec.factories import SOURCE, TARGET, make_encdec

            folder = tmp / "t5"
            if not folder.exists():
                make_encdec("t5", folder, seed=0)
            loaded = load_hf_model(folder, device="cpu")
            prep = prepare_encdec_text(loaded, SOURCE, target=TARGET)
            trace = capture_encdec(loaded.model, prep.inputs, prep.tokens, meta=dict(prep.meta), attention=attention)
            n_src = prep.inputs["input_ids"].shape[1]
            trace.arrays["src_tokens"] = np.array(prep.meta.get("src_tokens") or ["s"] * n_src, dtype=str)
            return trace
        return make

    def hf_on_demand():
        from attnviz.hf.capture import capture_hf
        from attnviz.hf.loader import load_hf_model
        from tests.hf.factories import make_model, prepare

        loaded = load_hf_model(make_model("llama", tmp / "llama", seed=5), device="cpu")
        prep = prepare(loaded)
        return capture_hf(loaded.model, prep.inputs, prep.tokens, meta=dict(prep.meta), attention="on_demand")

    def attentions():
        import attnviz

        g = np.random.default_rng(0)
        maps = g.random((2, 3, 4, 4)).astype(np.float32)
        return attnviz.from_attentions(maps / maps.sum(-1, keepdims=True), ["a", "b", "c", "d"], name="given").trace

    return {"native_encoder": native("encoder"), "native_decoder_gqa": native("decoder", n_kv_heads=2),
            "native_encdec": native("encoder-decoder"), "native_vit": native("vit"),
            "hf_bert": hf("bert"), "hf_gpt2_grad": hf("gpt2", grad=True), "hf_llama_on_demand": hf_on_demand,
            "hf_t5_eager": encdec("eager"), "hf_t5_on_demand": encdec("on_demand"), "attentions": attentions}


def main(out: str) -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    metas = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in sources(Path(tmp)).items():
            trace = make()
            trace.save(out_dir / f"{name}.npz")
            metas[name] = trace.meta
    (out_dir / "metas.json").write_text(json.dumps(metas, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
