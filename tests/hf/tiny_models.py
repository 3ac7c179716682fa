"""Tiny random-weight Hugging Face models built from configs (no files, no download), one per family.

``build(name)`` → (model in eval mode on eager attention, inputs of batch one). Two layers, hidden 32–64;
grouped-query attention, sliding windows and soft-caps switched on where the family has them, so the
tests see them on the real model.
"""

from __future__ import annotations

import torch

from .factories import hf

T = 9  # tokens of the text inputs (above the sliding window below: the window shows in the mask)
VOCAB = 64
_DEC = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64)
_ENC = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64)


def _configs(tf) -> dict:
    return {
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**_DEC, num_key_value_heads=2)),
        "mistral": lambda: tf.MistralForCausalLM(tf.MistralConfig(**_DEC, num_key_value_heads=2, sliding_window=4)),
        "qwen2": lambda: tf.Qwen2ForCausalLM(tf.Qwen2Config(**_DEC, num_key_value_heads=2)),
        "qwen3": lambda: tf.Qwen3ForCausalLM(tf.Qwen3Config(**_DEC, num_key_value_heads=1, head_dim=16)),
        "gemma": lambda: tf.GemmaForCausalLM(tf.GemmaConfig(**_DEC, num_key_value_heads=1, head_dim=8)),
        "gemma2": lambda: tf.Gemma2ForCausalLM(tf.Gemma2Config(
            **_DEC, num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=16, attn_logit_softcapping=5.0,
            final_logit_softcapping=None, sliding_window=4, layer_types=["sliding_attention", "full_attention"])),
        "phi3": lambda: tf.Phi3ForCausalLM(tf.Phi3Config(**_DEC, num_key_value_heads=2, pad_token_id=0)),
        "gpt_neox": lambda: tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(
            vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64, rotary_pct=0.5)),
        "opt": lambda: tf.OPTForCausalLM(tf.OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                                                      num_attention_heads=4, max_position_embeddings=64,
                                                      word_embed_proj_dim=32, pad_token_id=1)),
        "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4,
                                                         n_positions=64)),
        "bert": lambda: tf.BertForMaskedLM(tf.BertConfig(**_ENC)),
        "roberta": lambda: tf.RobertaForMaskedLM(tf.RobertaConfig(**_ENC, pad_token_id=1)),
        "distilbert": lambda: tf.DistilBertForMaskedLM(tf.DistilBertConfig(
            vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64)),
        "vit": lambda: tf.ViTForImageClassification(tf.ViTConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
            patch_size=4, num_labels=3)),
        "swin": lambda: tf.SwinForImageClassification(tf.SwinConfig(
            image_size=32, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4, num_labels=3)),
        "falcon": lambda: tf.FalconForCausalLM(tf.FalconConfig(
            vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, attn_implementation="eager")),
        "falcon_alibi": lambda: tf.FalconForCausalLM(tf.FalconConfig(
            vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, alibi=True,
            multi_query=False, parallel_attn=False, attn_implementation="eager")),
        "falcon_gqa": lambda: tf.FalconForCausalLM(tf.FalconConfig(
            vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=2,
            new_decoder_architecture=True, attn_implementation="eager")),
        # DeBERTa-v3's own settings: content→position and position→content terms, log buckets, shared keys
        "deberta-v2": lambda: tf.DebertaV2ForMaskedLM(tf.DebertaV2Config(
            **_ENC, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8,
            max_relative_positions=16, share_att_key=True, norm_rel_ebd="layer_norm")),
        "deberta-v2_separate": lambda: tf.DebertaV2ForMaskedLM(tf.DebertaV2Config(
            **_ENC, relative_attention=True, pos_att_type=["c2p"], share_att_key=False)),
        "bloom": lambda: tf.BloomForCausalLM(tf.BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4)),
        "deberta": lambda: tf.DebertaForMaskedLM(tf.DebertaConfig(**_ENC, relative_attention=True,
                                                                  pos_att_type=["c2p", "p2c"])),
        "mpt": lambda: tf.MptForCausalLM(tf.MptConfig(vocab_size=VOCAB, d_model=32, n_layers=2, n_heads=4,
                                                     max_seq_len=64, attn_implementation="eager")),
        # six heads: slopes that are not powers of two, in MPT's interleaved order; q/k/v clamped to ±0.5
        "mpt_clip": lambda: tf.MptForCausalLM(tf.MptConfig(vocab_size=VOCAB, d_model=48, n_layers=2, n_heads=6,
                                                          max_seq_len=64, attn_config={"clip_qkv": 0.5},
                                                          attn_implementation="eager")),
        # learned attention sinks (one logit per head in every row's normaliser), a window in layer 0, 2 kv heads
        "gpt_oss": lambda: tf.GptOssForCausalLM(tf.GptOssConfig(
            vocab_size=VOCAB, hidden_size=32, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, head_dim=8, num_local_experts=4, num_experts_per_tok=2, sliding_window=4,
            layer_types=["sliding_attention", "full_attention"])),
        "gpt_neo": lambda: tf.GPTNeoForCausalLM(tf.GPTNeoConfig(
            vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
            window_size=4, max_position_embeddings=64)),
    }


INTERFACE = ["llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "gpt_neox", "opt", "gpt2", "bert",
             "roberta", "distilbert", "vit"]
# attention computed by the family itself, read by hooks on its public submodules (attnviz.hf.own_attention)
# (mpt_clip is not among them: its q/k/v are clamped after the projection, so W_Q·x is not q and the trace says so)
HOOKED = ["falcon", "falcon_alibi", "falcon_gqa", "deberta-v2", "deberta-v2_separate", "bloom", "gpt_neo", "mpt"]
OWN_ATTENTION = ["deberta"]  # computes attention itself, no adapter: probabilities only


def build(name: str, seed: int = 0):
    """(model, inputs): random weights spread wider than the init so heads differ visibly."""
    tf = hf()
    torch.manual_seed(seed)
    model = _configs(tf)[name]()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (0.3 if p.dim() >= 2 else 0.1))
    model.eval()
    model.set_attn_implementation("eager")
    if name in ("vit", "swin"):
        side = model.config.image_size
        inputs = {"pixel_values": torch.randn(1, 3, side, side, generator=g)}
    else:
        inputs = {"input_ids": torch.randint(3, VOCAB, (1, T), generator=g)}
    return model, inputs


def tokens_of(inputs: dict, model) -> list[str]:
    if "pixel_values" in inputs:
        side = model.config.image_size // model.config.patch_size
        return ["[CLS]"] + [f"{r},{c}" for r in range(side) for c in range(side)]
    return [f"t{int(i)}" for i in inputs["input_ids"][0]]


def captured_pairs(after: bool = False, **options):
    """``get(name)`` → (model, inputs, the model's own eager output with attentions, ``capture_hf`` trace with
    ``options``[, the model's output after the capture when ``after``]), built once per family name.

    The module-scoped fixtures of the capture tests return this (one tiny model per family, reused)."""
    from attnviz.hf.capture import capture_hf

    cache = {}

    def get(name):
        if name not in cache:
            model, inputs = build(name)
            with torch.no_grad():
                ref = model(**inputs, output_attentions=True)
            made = (model, inputs, ref, capture_hf(model, inputs, tokens_of(inputs, model), **options))
            if after:  # the capture left the model as it found it: the same forward afterwards
                with torch.no_grad():
                    made += (model(**inputs),)
            cache[name] = made
        return cache[name]

    return get
