"""A clip at 8 fps: the M-RoPE positions verl's own agent loop gives it in training, this package's, and vLLM's.

verl's ``AgentLoopWorker._compute_position_ids`` (run here as verl runs it, on verl's own processor from
``hf_processor``) passes no ``second_per_grid_ts`` to the model's ``get_rope_index``, so the clip counts as 2 fps. The
host's seam (``hf_processor.rope_index``) gives the processor vLLM's rule and the clip's timing. vLLM's own positions
come from its Qwen2.5-VL ``get_mrope_input_positions``, fed what vLLM's own multimodal processor makes of the same
clip handed over as verl's loops hand it, ``(frames, metadata)``: vLLM 0.28 drops that metadata for Qwen2.5-VL and
transformers 5 then takes 24 fps (a temporal patch of 2/24 s), unless the host's ``vllm:`` seams keep it.

Worked out by hand for the tiny model (``tokens_per_second`` 2, temporal patch 2, 14-px patches merged 2x2): 8 frames
of 56x56 px are 4 temporal patches of 2x2 merged tokens; at 8 fps a temporal patch lasts 2/8 = 0.25 s, so its temporal
offset is floor(k * 0.25 * 2) = 0, 0, 1, 1 for k = 0..3 (vLLM, and this package); at 2 fps it would be k * 1.0 * 2 =
0, 2, 4, 6 (verl's own loop). Text after the clip starts one past its largest position: the clip starts at position p
(after "ab" and <|vision_start|>: p = 3), its tokens reach p + max(1, 1, 1) = 4, so the text resumes at 5 (vLLM and
this package); transformers 5.9 resumes at p + max(h, w) = 5 whatever the clip's length.
"""

from __future__ import annotations

import types

import pytest
import torch

FRAMES, FPS = 8, 8.0


@pytest.fixture(scope="module")
def clip():
    from zoomzero_plugin.hosts.verl.rows import clip_metadata

    return torch.zeros((FRAMES, 3, 56, 56), dtype=torch.uint8), clip_metadata(FRAMES, FPS)


@pytest.fixture(scope="module")
def vllm_processor(verl_model_dir):
    """vLLM's own multimodal processor of the tiny Qwen2.5-VL (what its engine runs on every request; no engine)."""
    from vllm.config import ModelConfig
    from vllm.multimodal import MULTIMODAL_REGISTRY

    return MULTIMODAL_REGISTRY.create_processor(ModelConfig(model=str(verl_model_dir), dtype="float32"))


def vllm_processed(processor, clip, parser=None) -> dict:
    """vLLM's processing of ``ab<clip>cd`` with the clip as verl's loops hand it: prompt ids, grid, seconds per grid."""
    from vllm.multimodal.processing.context import TimingContext
    from vllm.multimodal.processing.inputs import ProcessorInputs

    items = (parser or processor.info.get_data_parser()).parse_mm_data({"video": [clip]})
    inputs = ProcessorInputs(prompt="ab<|vision_start|><|video_pad|><|vision_end|>cd", mm_data_items=items)
    out = processor.apply(inputs, TimingContext(enabled=False))
    video = out["mm_kwargs"]["video"][0]
    return {
        "input_ids": torch.tensor([out["prompt_token_ids"]]),
        "video_grid_thw": video["video_grid_thw"].data[None],
        "second_per_grid_ts": video["second_per_grid_ts"].data.reshape(1),
    }


@pytest.fixture(scope="module")
def clip_batch(verl_model_dir, clip):
    from verl.utils.tokenizer import hf_processor

    stock = hf_processor(str(verl_model_dir))  # verl's processor, its get_rope_index bound by verl
    videos = [clip]
    text = "ab<|vision_start|><|video_pad|><|vision_end|>cd"
    from verl.utils.tokenizer import build_multimodal_processor_inputs

    inputs = dict(build_multimodal_processor_inputs(stock, text=[text], videos=videos).convert_to_tensors("pt"))
    return stock, inputs


def verl_positions(processor, inputs):
    """(3, L) temporal/height/width rows as verl's own agent loop computes them (its worker method, its processor)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    ids = inputs["input_ids"]
    mask = torch.ones_like(ids)
    mm = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")}
    worker = types.SimpleNamespace(processor=processor)
    positions = AgentLoopWorker._compute_position_ids(worker, ids, mask, mm)  # (1, 4, L): text row, then 3 M-RoPE
    return positions[0, 1:]


def vllm_positions(model_dir, inputs):
    """(3, L) from vLLM's Qwen2.5-VL get_mrope_input_positions, fed a clip's grid and seconds per grid."""
    from transformers import AutoConfig
    from vllm.model_executor.models.qwen2_5_vl import Qwen2_5_VLForConditionalGeneration as VllmQwen

    config = AutoConfig.from_pretrained(model_dir)
    ids = inputs["input_ids"][0].tolist()
    video = config.video_token_id
    feature = types.SimpleNamespace(
        modality="video",
        mm_position=types.SimpleNamespace(offset=ids.index(video)),
        data={
            "video_grid_thw": types.SimpleNamespace(data=inputs["video_grid_thw"][0]),
            "second_per_grid_ts": types.SimpleNamespace(data=torch.tensor(float(inputs["second_per_grid_ts"][0]))),
        },
    )
    model = types.SimpleNamespace(config=config)
    model.iter_mm_grid_thw = types.MethodType(VllmQwen.iter_mm_grid_thw, model)
    positions, _ = VllmQwen.get_mrope_input_positions(model, ids, [feature])
    return positions


def test_the_processor_gives_the_clip_its_own_rate(clip_batch):
    _, inputs = clip_batch
    assert inputs["video_grid_thw"][0].tolist() == [4, 4, 4]  # 4 temporal patches of 4x4 patches (2x2 merged)
    assert float(inputs["second_per_grid_ts"][0]) == pytest.approx(2 / FPS)


def test_verls_own_loop_times_the_clip_at_2_fps(clip_batch):
    from zoomzero_plugin.hosts.verl.rope import QWEN2_PROCESSORS

    stock, inputs = clip_batch
    assert type(stock).__name__ in QWEN2_PROCESSORS and not hasattr(stock, "get_rope_index_kwargs")
    temporal = verl_positions(stock, inputs)[0].tolist()
    clip = temporal[3:19]  # "a", "b", <|vision_start|>, then 16 clip tokens
    assert clip == [3] * 4 + [5] * 4 + [7] * 4 + [9] * 4  # p + (0, 2, 4, 6): 2 fps
    # and, transformers 5.9's own rule, the text after a video resumes at p + max(h, w) = 3 + 2 (vLLM: one past the
    # block's largest position on any axis, 3 + 6 + 1 = 10 at 2 fps): <|vision_end|> at 5, "c" at 6
    assert temporal[19:21] == [5, 6]


def test_vllms_processor_times_the_clip_at_8_fps(vllm_processor, clip, clip_batch):
    """The clip as verl hands it to vLLM: vLLM's own processing gives it 2/8 s per temporal patch, the same tokens."""
    _, inputs = clip_batch
    processed = vllm_processed(vllm_processor, clip)
    assert processed["video_grid_thw"][0].tolist() == [4, 4, 4]
    assert float(processed["second_per_grid_ts"][0]) == pytest.approx(2 / FPS)  # 0.25 s, not 2/24 (24 fps)
    assert torch.equal(processed["input_ids"], inputs["input_ids"])


def test_the_hosts_processor_and_vllm_time_the_clip_at_8_fps(clip_batch, verl_model_dir, vllm_processor, clip):
    from verl.utils.tokenizer import hf_processor

    from zoomzero_plugin.hosts.verl.rope import timed_processor

    _, inputs = clip_batch
    timed = timed_processor(hf_processor(str(verl_model_dir)))
    ours = verl_positions(timed, inputs)
    vllm = vllm_positions(verl_model_dir, vllm_processed(vllm_processor, clip))  # what vLLM samples the clip at
    assert ours[0, 3:19].tolist() == [3] * 8 + [4] * 8  # p + (0, 0, 1, 1): 8 fps
    assert ours[0, 19:].tolist() == [5, 6, 7]  # <|vision_end|> one past the clip's largest position (p + 1), then text
    assert torch.equal(ours, vllm)


def test_the_seam_is_on_verls_processor_in_every_loop_worker(verl_model_dir):
    """verl's model config builds the processor through the seam once the plugin is active (the entry point)."""
    import verl.workers.config.model as model_config

    import zoomzero_plugin.hosts.verl.plugin  # noqa: F401 - verl imported it already; here for the reader

    assert getattr(model_config.hf_processor, "__zoomzero_seam__", None) == "hf_processor.rope_index"
    processor = model_config.hf_processor(str(verl_model_dir))
    assert processor.get_rope_index_kwargs({"second_per_grid_ts": [0.25]}) == {"second_per_grid_ts": [0.25]}


def test_without_the_seams_vllm_times_the_clip_at_24_fps(vllm_processor, clip):
    """vLLM 0.28's own parser (the seam's original) keeps the frames and drops the metadata; transformers 5 then
    computes Qwen2.5-VL's seconds per temporal patch for 24 fps: 2/24 s, whatever the clip's rate."""
    from vllm.model_executor.models.qwen2_vl import Qwen2VLProcessingInfo

    get_data_parser = Qwen2VLProcessingInfo.get_data_parser
    assert getattr(get_data_parser, "__zoomzero_seam__", None) == "vllm:qwen2_vl.parse_video_metadata"
    stock = get_data_parser.__wrapped__(vllm_processor.info)
    processed = vllm_processed(vllm_processor, clip, parser=stock)
    assert float(processed["second_per_grid_ts"][0]) == pytest.approx(2 / 24)
