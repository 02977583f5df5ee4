"""The VideoZoomer rollout on Qwen3-VL, and with clips shown as videos (``agent.clip_as: video``) on both families:
EasyR1's own actor computes the log-probs of the assembled multi-turn batch, and they equal the sampler's.

Real: FSDPWorker.generate_sequences (through the host's routing), vLLMRollout.generate_sequences (one call per round,
its _process_multi_modal_data and process_image/process_video, the host's seams), FSDPWorker._process_multi_modal_inputs
(the host's seam: images by the image processor, videos by the video processor), DataParallelPPOActor.compute_log_prob
(transformers' Qwen2.5-VL / Qwen3-VL forward, float32, padding_free off). Stand-in: the engine (tests/easyr1/
tiny_rollout.py: the tiny HF model on the inputs vLLM would build from the token ids, guided to scripted turns). The
batch is built by hand (raw prompt ids and media, as EasyR1's dataset hands them over): EasyR1 v0.3.2's RLHFDataset
cannot read Qwen3-VL video rows (its get_rope_index is Qwen2-VL's), EasyR1 main's can.

The clips here are sampled at whole seconds per temporal patch (frames 4 native frames apart at 4 fps: 1 s, 2 s per
patch): transformers 4.57's Qwen2.5-VL ``get_rope_index`` truncates seconds per temporal patch to an integer, where
vLLM and EasyR1 do not, so only there does the stand-in (transformers' generate) time a clip as vLLM does. The
assembly follows vLLM; tests/vllm check clips at other rates on vLLM's real engine.
"""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from .helpers import evidence_rows
from .test_agent_rollout import RECIPE, AgentGuide, actor_log_probs, answer, call, load
from .tiny_rollout import TinyEngine, TinyRolloutWorkerGroup

QUESTIONS = [
    ("What colour is the square?", ("red", "green", "blue"), "A"),
    ("Which colour appears?", ("yellow", "red", "cyan"), "B"),
]
# per question, per sample: scripted turns (a 1-frame call shows a clip of one frame, padded to a temporal patch).
# [2, 6] at 1.25 fps: frames linspace(8, 24, 5) = 8, 12, …, 24; [3, 5] at 2.5 fps: 12, 14, …, 20; [10, 11] at 1: 40
SCRIPTS = [
    [[answer("A", 0)], [call(2, 6, 1.25, 1), answer("A", 1)]],
    [[call(3, 5, 2.5, 0), call(10, 11, 1, 0), answer("C", 0)], [answer("B", 1)]],
]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return evidence_rows(tmp_path_factory.mktemp("agent-families"), QUESTIONS, 16.0)


@pytest.fixture(scope="module")
def qwen3_model(tiny_qwen3_dir):
    from transformers import Qwen3VLForConditionalGeneration

    return Qwen3VLForConditionalGeneration.from_pretrained(tiny_qwen3_dir).eval()


def generate(config, rows, tokenizer, processor, model):
    """One generation of both rows, n=2 each, through the routed worker group (EasyR1's per-rank chunks)."""
    from verl.protocol import DataProto

    from zoomzero_plugin.hosts.easyr1.generation import ROW_FIELDS_KEY, RoutedWorkerGroup
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import ROLLOUT, select

    k = len(rows)
    raw, media = np.empty(k, dtype=object), np.empty(k, dtype=object)
    raw[:] = [tokenizer.encode(r["prompt"], add_special_tokens=False) for r in rows]
    media[:] = [{"videos": r["videos"], ROW_FIELDS_KEY: {"ground_truth": r["answer"]}} for r in rows]
    shape = torch.zeros((k, 1), dtype=torch.long)
    batch = DataProto.from_dict(
        tensors={"input_ids": shape, "attention_mask": torch.ones_like(shape), "position_ids": shape.clone()},
        non_tensors={"raw_prompt_ids": raw, "multi_modal_data": media},
        meta_info={"min_pixels": 3136, "max_pixels": 12544, "video_fps": 0.5},
    )
    engine = TinyEngine(model, processor, AgentGuide(QUESTIONS, SCRIPTS))
    group = RoutedWorkerGroup(TinyRolloutWorkerGroup(config, tokenizer, engine), ROLLOUT, select(config))
    return group.generate_sequences(batch), engine


CASES = {  # family, clip_as: what the existing test (test_agent_rollout.py) does not cover already
    "qwen3-images": ("qwen3_vl", "images"),
    "qwen3-video": ("qwen3_vl", "video"),
    "qwen2.5-video": ("qwen2_5_vl", "video"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def generated(request, rows, tmp_path_factory, easyr1_model_dir, tiny_model, tiny_qwen3_dir, qwen3_model):
    from verl.utils.tokenizer import get_processor, get_tokenizer

    family, clip_as = CASES[request.param]
    model_dir, model = (tiny_qwen3_dir, qwen3_model) if family == "qwen3_vl" else (easyr1_model_dir, tiny_model)
    path, data = rows
    recipe = tmp_path_factory.mktemp("recipe") / "videozoomer_family.yaml"
    recipe.write_text(RECIPE.format(rows=path, model=model_dir))
    config = load(recipe, "worker.rollout.n=2", f"worker.reward.reward_function_kwargs.agent.clip_as={clip_as}")
    tokenizer, processor = get_tokenizer(str(model_dir)), get_processor(str(model_dir))
    batch, engine = generate(config, data, tokenizer, processor, model)
    log_probs, actor_data = actor_log_probs(batch, model, processor)
    return SimpleNamespace(
        batch=batch,
        engine=engine,
        model=model,
        processor=processor,
        tokenizer=tokenizer,
        clip_as=clip_as,
        family=family,
        log_probs=log_probs,
        inputs=actor_data.non_tensor_batch["multi_modal_inputs"],
    )


def test_every_trajectory_follows_its_script(generated):
    stats = list(generated.batch.non_tensor_batch["agent_stats"])
    assert [(s["calls"], s["clip_frames"], s["end"]) for s in stats] == [
        (0, 0, "answer"),
        (1, 5, "answer"),
        (2, 6, "answer"),
        (0, 0, "answer"),
    ]
    videos = [s["videos"] for s in stats]
    assert videos == ([0, 1, 2, 0] if generated.clip_as == "video" else [0, 0, 0, 0])


def test_clips_reach_the_engine_as_the_option_says(generated):
    calls = generated.engine.calls
    later = [c for c in calls if "<tool_response>" in c["text"]]
    assert later
    if generated.clip_as == "images":
        assert all("<clip_time" not in c["text"] for c in later)
        return
    # q1 / sample 0: [3, 5] at 2.5 fps -> frames 12, 14, …, 20 (5, padded to 6); [10, 11] at 1 fps -> frame 40 alone
    last = max(later, key=lambda c: c["text"].count("<tool_response>"))
    assert "<clip_time3.00s-5.00s>\n<|vision_start|><|video_pad|><|vision_end|>" in last["text"]
    assert "<clip_time10.00s-10.00s>" in last["text"]
    (frames, metadata), (single, alone) = last["videos"]  # each clip (frames, metadata), as vLLM takes it
    assert metadata["frames_indices"] == [12, 14, 16, 18, 20, 20] and metadata["fps"] == 4.0 and frames.shape[0] == 6
    assert alone["frames_indices"] == [40, 40] and single.shape[0] == 2, "one frame, padded to a temporal patch"
    if generated.family == "qwen2_5_vl":  # its rate reaches the engine: frames 2 native frames apart at 4 fps
        assert last["mm_processor_kwargs"]["fps"] == [2.0, 4.0]


def test_actor_log_probs_equal_the_sampling_log_probs(generated):
    batch, inputs = generated.batch, generated.inputs
    sampled = batch.batch["response_mask"].bool()
    diff = (generated.log_probs - batch.batch["rollout_log_probs"])[sampled].abs()
    assert sampled.sum() > 100 and diff.max() < 1e-5, f"max |actor - sampler| = {diff.max():.2e}"
    if generated.clip_as == "video":  # the actor read the clips as videos, with the engine's grids
        assert "video_grid_thw" in inputs[2] and int(inputs[2]["video_grid_thw"][:, 0].sum()) == 3 + 1


def test_positions_equal_transformers_get_rope_index(generated):
    """The assembled M-RoPE rows equal the model's own get_rope_index over the same ids and grids (Qwen2.5-VL: with
    each clip's seconds per temporal patch, 2 / its own rate)."""
    batch, inputs = generated.batch, generated.inputs[2]
    mask = batch.batch["attention_mask"][2:3]
    kwargs = {
        "image_grid_thw": inputs["image_grid_thw"],
        "video_grid_thw": inputs.get("video_grid_thw"),
        "attention_mask": mask,
    }
    if generated.family == "qwen2_5_vl" and "video_grid_thw" in inputs:
        refs = batch.non_tensor_batch["multi_modal_data"][2]["videos"]
        kwargs["second_per_grid_ts"] = torch.tensor([2.0 / r["sample_fps"] for r in refs])
    expected, _ = generated.model.model.get_rope_index(batch.batch["input_ids"][2:3], **kwargs)
    real = mask[0].bool()
    assert torch.equal(batch.batch["position_ids"][2, 1:, real], expected[:, 0, real])
