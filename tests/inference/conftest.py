"""Fixtures for inference and evaluation: the real transformers backend on the tiny model and a synthetic
benchmark. Tests put chosen words in the real model's mouth with
:class:`~zoomzero_plugin.inference.scripted.ScriptedBackend` (the random tiny model never writes a valid
span), so a test controls which spans a pass predicts and with what confidence while everything
downstream (parsing, planning, decoding the zoom pass, the model's passes) is real.
"""

from __future__ import annotations

import pytest

from zoomzero_plugin.gvqa.zoom import ZoomBudget
from zoomzero_plugin.inference.scripted import ScriptedBackend, template

SMALL = ZoomBudget(max_visual_tokens=64, min_frame_pixels=4 * 28 * 28, fps=1.0, max_frames=256)
grounded = template

__all__ = ["SMALL", "ScriptedBackend", "grounded"]


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir):
    from zoomzero_plugin.inference.hf_backend import TransformersBackend

    return TransformersBackend(str(tiny_model_dir), device="cpu", batch_size=4)


@pytest.fixture(scope="session")
def bench_rows(tmp_path_factory):
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=4, seed=3)


@pytest.fixture(scope="session")
def tiny_qwen3_dir(tmp_path_factory):
    """A random tiny Qwen3-VL (patch 16, so 32 pixels per token side) with Qwen's real processor classes."""
    import torch
    from transformers import Qwen2VLImageProcessorFast, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    from zoomzero_plugin.synthetic.tiny_qwen import CHAT_TEMPLATE, build_tokenizer

    path = tmp_path_factory.mktemp("tiny-qwen3")
    tok = build_tokenizer()
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessorFast(patch_size=16), tokenizer=tok,
                                 video_processor=Qwen3VLVideoProcessor(), chat_template=CHAT_TEMPLATE)
    ids = tok.convert_tokens_to_ids
    config = Qwen3VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=32768,
                         rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True},
                         tie_word_embeddings=True),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=16, deepstack_visual_indexes=[1], num_position_embeddings=256),
        image_token_id=ids("<|image_pad|>"), video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"), vision_end_token_id=ids("<|vision_end|>"),
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(config)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = tok.eos_token_id, tok.pad_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
