"""A tiny random Qwen2.5-VL with a real processor, built offline in well under a second.

Real transformers classes throughout (tokenizer, image/video processors, model); only the sizes and the
weights are toy. Used by the tests and by ``zoomzero demo``; nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

from ..cpu_compat import ensure_torchvision_importable

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# Qwen2-VL's chat template, in the same shape: one turn per message, vision placeholders in place.
CHAT_TEMPLATE = (
    "{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful "
    "assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "<think>The evidence appears at <time>(12.5, 20.0)</time> so the answer is B.</think>"
    "<answer>B</answer><glue>[(12.5, 20.0), (31.0, 33.5)]</glue>",
    "Question: What colour is the square? Options: (A) red (B) green (C) blue (D) yellow",
    "Respond with only the letter of the option. Think step by step, then answer.",
    "0123456789 .,:;()[]<>/ ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz",
    "Look at the video and find the time spans that support your answer, in seconds.",
    '<video_zoom>{"segment": [10.0, 18.0], "fps": 2}</video_zoom>',
]


def build_tokenizer(vocab_size: int = 600):
    """A byte-level BPE tokenizer with Qwen's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2TokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_CORPUS * 4, trainer=trainer)
    tokenizer = Qwen2TokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        additional_special_tokens=SPECIAL_TOKENS[1:],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_processor(tokenizer=None, pixel_bounds: tuple[int, int] | None = None):
    """``Qwen2_5_VLProcessor`` around the tiny tokenizer and Qwen's own image/video processors.

    ``pixel_bounds``: (min, max) pixels per image and per frame; None keeps transformers' defaults.
    """
    ensure_torchvision_importable()
    from transformers import Qwen2_5_VLProcessor, Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    tokenizer = tokenizer or build_tokenizer()
    bounds = {}
    if pixel_bounds is not None:
        low, high = pixel_bounds
        bounds = dict(min_pixels=low, max_pixels=high, size={"shortest_edge": low, "longest_edge": high})
    return Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(**bounds),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(**bounds),
        chat_template=CHAT_TEMPLATE,
    )


# M-RoPE sections (temporal, height, width) in rotary pairs: they sum to head_dim / 2.
_MROPE_SECTIONS = {16: [2, 3, 3], 32: [4, 6, 6]}

# A released Qwen2.5-VL checkpoint's pixel bounds per image or frame (its preprocessor_config.json). vLLM
# resizes frames into the checkpoint's bounds, so a model served by vLLM must carry these for its token counts
# to match the zoom plans (transformers' own default video bounds, 100,352..602,112, would upscale small frames).
CHECKPOINT_MIN_PIXELS, CHECKPOINT_MAX_PIXELS = 3136, 12845056


def build_config(tokenizer, heads: int = 4, kv_heads: int = 2):
    """A 2-layer, 64-wide Qwen2.5-VL config whose special-token ids match ``tokenizer``.

    ``heads``: attention heads of the language model (head size 64 / heads: 16 or 32). vLLM's CPU attention
    takes head sizes 32..512 only, so a model for vLLM uses 2 heads and 1 KV head.
    """
    from transformers import Qwen2_5_VLConfig

    ids = tokenizer.convert_tokens_to_ids
    return Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            max_position_embeddings=32768,
            rope_scaling={"type": "mrope", "mrope_section": _MROPE_SECTIONS[64 // heads]},
            tie_word_embeddings=True,
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=64,
            fullatt_block_indexes=[1],
            window_size=112,
            tokens_per_second=2,  # released Qwen2.5-VL checkpoints (and EasyR1's get_rope_index) use 2, not 4
        ),
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
        bos_token_id=None,
        eos_token_id=ids("<|im_end|>"),
        pad_token_id=ids("<|endoftext|>"),
        tie_word_embeddings=True,
    )


def build_tiny_qwen(path: str | Path, seed: int = 0, for_vllm: bool = False) -> Path:
    """Write a random tiny Qwen2.5-VL (model, tokenizer, processor) to ``path`` and return it.

    ``for_vllm``: a variant vLLM's CPU engine serves: head size 32 (2 heads, 1 KV head) and a released
    checkpoint's pixel bounds (:data:`CHECKPOINT_MIN_PIXELS`..:data:`CHECKPOINT_MAX_PIXELS`) for images and frames.
    """
    ensure_torchvision_importable()
    import torch
    from transformers import Qwen2_5_VLForConditionalGeneration

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    processor = build_processor(pixel_bounds=(CHECKPOINT_MIN_PIXELS, CHECKPOINT_MAX_PIXELS) if for_vllm else None)
    torch.manual_seed(seed)
    heads = dict(heads=2, kv_heads=1) if for_vllm else {}
    model = Qwen2_5_VLForConditionalGeneration(build_config(processor.tokenizer, **heads))
    model.generation_config.eos_token_id = processor.tokenizer.eos_token_id
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
