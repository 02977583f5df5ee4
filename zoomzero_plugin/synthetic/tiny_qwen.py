"""Tiny random Qwen-VL models with real processors, built offline in well under a second: Qwen2.5-VL (14-px patches)
and Qwen3-VL (16-px patches, interleaved M-RoPE, DeepStack, frame timestamps written into the prompt).

Real transformers classes throughout (tokenizer, image/video processors, model); only the sizes and the
weights are toy. Used by the tests and by ``zoomzero demo``; nothing is downloaded. :data:`FAMILIES` names them.
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


_TINY_VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64)


def _special_ids(tokenizer) -> dict:
    """The tiny tokenizer's BOS/EOS/pad ids, for the text config too (transformers 5 gives a text config Qwen's own
    151,643.. ids otherwise, outside the tiny vocabulary)."""
    ids = tokenizer.convert_tokens_to_ids
    return dict(bos_token_id=None, eos_token_id=ids("<|im_end|>"), pad_token_id=ids("<|endoftext|>"))


def _vision_token_ids(tokenizer) -> dict[str, int]:
    """The config's vision token ids, ``tokenizer``'s ids of Qwen's vision tokens."""
    ids = tokenizer.convert_tokens_to_ids
    return dict(
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )


def build_config(tokenizer, heads: int = 4, kv_heads: int = 2, text: dict | None = None, vision: dict | None = None):
    """A 2-layer, 64-wide Qwen2.5-VL config whose special-token ids match ``tokenizer``.

    ``heads``: attention heads of the language model (head size 64 / heads: 16 or 32). vLLM's CPU attention
    takes head sizes 32..512 only, so a model for vLLM uses 2 heads and 1 KV head.
    ``text``, ``vision``: entries that replace the tiny sizes of the text and vision configs (a real checkpoint's
    shape, say; a ``vocab_size`` larger than the tokenizer's leaves the rows past it unused).
    """
    from transformers import Qwen2_5_VLConfig

    text_config = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=32768,
        rope_scaling={"type": "mrope", "mrope_section": _MROPE_SECTIONS[64 // heads]},
        tie_word_embeddings=True,
        **_special_ids(tokenizer),
    ) | (text or {})
    vision_config = dict(
        **_TINY_VISION,
        fullatt_block_indexes=[1],
        window_size=112,
        tokens_per_second=2,  # released Qwen2.5-VL checkpoints (and EasyR1's get_rope_index) use 2, not 4
    ) | (vision or {})
    return Qwen2_5_VLConfig(
        text_config=text_config,
        vision_config=vision_config,
        **_vision_token_ids(tokenizer),
        **_special_ids(tokenizer),
        tie_word_embeddings=text_config["tie_word_embeddings"],
    )


# The tiny Qwen3-VL's pixel bounds: per image, and per video over frames x height x width (Qwen3-VL's video processor
# bounds a whole clip). The lower bounds are 4 tokens (qwen-vl-utils' own image minimum), so the tests' small frames
# are not upscaled; the upper ones are the released Qwen3-VL checkpoints' (their preprocessor configs).
QWEN3_IMAGE_PIXELS, QWEN3_VIDEO_PIXELS = (4096, 16777216), (4096, 25165824)
QWEN3_MEAN_STD = [0.5, 0.5, 0.5]  # the released checkpoints' normalisation, images and videos alike


def build_qwen3_processor(tokenizer=None):
    """``Qwen3VLProcessor`` around the tiny tokenizer, with Qwen's own image (16-px patches) and video processors; both
    normalise with mean and std 0.5, as the released Qwen3-VL checkpoints' do (transformers' image processor default is
    CLIP's)."""
    ensure_torchvision_importable()
    from transformers import Qwen2VLImageProcessorFast, Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer = tokenizer or build_tokenizer()
    (image_low, image_high), (video_low, video_high) = QWEN3_IMAGE_PIXELS, QWEN3_VIDEO_PIXELS
    return Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessorFast(
            patch_size=16,
            size={"shortest_edge": image_low, "longest_edge": image_high},
            image_mean=QWEN3_MEAN_STD,
            image_std=QWEN3_MEAN_STD,
        ),
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(size={"shortest_edge": video_low, "longest_edge": video_high}),
        chat_template=CHAT_TEMPLATE,
    )


def build_qwen3_config(tokenizer, text: dict | None = None, vision: dict | None = None):
    """A 2-layer, 64-wide Qwen3-VL config (head size 32, which vLLM's CPU attention takes) whose special-token ids
    match ``tokenizer``: interleaved M-RoPE, a 2-block vision tower of 16-px patches with one DeepStack layer.
    ``text``, ``vision``: entries that replace the tiny sizes (as in :func:`build_config`)."""
    from transformers import Qwen3VLConfig

    text_config = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        max_position_embeddings=32768,
        rope_scaling={"rope_type": "default", "mrope_section": _MROPE_SECTIONS[32], "mrope_interleaved": True},
        tie_word_embeddings=True,
        **_special_ids(tokenizer),
    ) | (text or {})
    vision_config = dict(
        **_TINY_VISION,
        patch_size=16,
        spatial_merge_size=2,
        temporal_patch_size=2,
        deepstack_visual_indexes=[0],
        num_position_embeddings=256,
    ) | (vision or {})
    return Qwen3VLConfig(
        text_config=text_config,
        vision_config=vision_config,
        **_vision_token_ids(tokenizer),
        tie_word_embeddings=text_config["tie_word_embeddings"],
    )


FAMILIES = ("qwen2_5_vl", "qwen3_vl")  # the model families build_tiny_qwen builds (their config's model_type)


def family_parts(
    family: str = "qwen2_5_vl", for_vllm: bool = False, text: dict | None = None, vision: dict | None = None
):
    """(processor, config, model class) of ``family`` (:data:`FAMILIES`), as :func:`build_tiny_qwen` builds them;
    ``text`` and ``vision`` replace entries of the tiny sizes (:func:`build_config`). Nothing is built or written."""
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; choose from {FAMILIES}")
    ensure_torchvision_importable()
    from transformers import Qwen2_5_VLForConditionalGeneration, Qwen3VLForConditionalGeneration

    if family == "qwen3_vl":
        processor = build_qwen3_processor()
        return processor, build_qwen3_config(processor.tokenizer, text, vision), Qwen3VLForConditionalGeneration
    processor = build_processor(pixel_bounds=(CHECKPOINT_MIN_PIXELS, CHECKPOINT_MAX_PIXELS) if for_vllm else None)
    heads = dict(heads=2, kv_heads=1) if for_vllm else {}
    config = build_config(processor.tokenizer, **heads, text=text, vision=vision)
    return processor, config, Qwen2_5_VLForConditionalGeneration


def build_tiny_qwen(path: str | Path, seed: int = 0, for_vllm: bool = False, family: str = "qwen2_5_vl") -> Path:
    """Write a random tiny Qwen-VL (model, tokenizer, processor) of ``family`` (:data:`FAMILIES`) to ``path``.

    ``for_vllm`` (Qwen2.5-VL): a variant vLLM's CPU engine serves: head size 32 (2 heads, 1 KV head) and a released
    checkpoint's pixel bounds (:data:`CHECKPOINT_MIN_PIXELS`..:data:`CHECKPOINT_MAX_PIXELS`) for images and frames.
    The Qwen3-VL is always one vLLM serves (head size 32; pixel bounds :data:`QWEN3_IMAGE_PIXELS`,
    :data:`QWEN3_VIDEO_PIXELS`).
    """
    import torch

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    processor, config, model_class = family_parts(family, for_vllm)
    model = model_class(config)
    model.generation_config.eos_token_id = processor.tokenizer.eos_token_id
    model.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
