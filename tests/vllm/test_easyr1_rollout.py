"""EasyR1's own vLLMRollout on vLLM's CPU engine: the coarse pass and the zoom pass of a training step.

Real: EasyR1's RayPPOTrainer._make_batch_data, RLHFDataset, vLLMRollout (its ``__init__`` with EasyR1's engine
arguments, through the ``vllm_rollout.LLM`` seam, and ``generate_sequences``), its reward manager as a Ray actor,
vLLM 0.11's engine and its Qwen2.5-VL input processing. Not run: EasyR1's FSDP actor and its weight gather
(GPUs); the tiny model's weights are loaded into the engine where EasyR1's sharding manager loads them.
The random model is steered into the response template with vLLM's own structured outputs, set per call
through ``meta_info`` (EasyR1 copies any SamplingParams field from it): a regex for the coarse pass, the option
letters for the zoom pass. Which letters and spans it writes is the model's choice.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from tests.vllm.conftest import release_engine
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.vision import fetch_patch_size

COARSE = r"<think>I see it\.</think><answer>[A-D]</answer><glue>\[\((1|3|6)\.0, (8|9|11)\.0\)\]</glue>"
LETTERS = ["A", "B", "C", "D"]


class RolloutWorkerGroup:
    """``actor_rollout_ref_wg`` for generation: what FSDPWorker.generate_sequences does per rank (eos/pad ids,
    equal chunks per rank), each chunk through EasyR1's real ``vLLMRollout.generate_sequences``."""

    def __init__(self, rollout, tokenizer, world_size: int = 2, steer: bool = True):
        self.rollout, self.tokenizer, self.world_size, self.steer = rollout, tokenizer, world_size, steer
        self.batches, self.outputs, self.requests = [], [], []  # requests: (what vLLM's engine got, its result)
        engine = rollout.inference_engine
        generate, add_request, received = engine.generate, engine.llm_engine.add_request, []

        def spy_add(request_id, prompt, *args, **kwargs):
            received.append(prompt)
            return add_request(request_id, prompt, *args, **kwargs)

        def spy(*args, **kwargs):
            received.clear()
            results = generate(*args, **kwargs)
            self.requests += list(zip(received, results))
            return results

        engine.llm_engine.add_request, engine.generate = spy_add, spy

    def generate_sequences(self, prompts):
        from verl.protocol import DataProto
        from vllm.sampling_params import StructuredOutputsParams

        self.batches.append(prompts)
        prompts.meta_info.update(eos_token_id=self.tokenizer.eos_token_id, pad_token_id=self.tokenizer.pad_token_id)
        if self.steer:
            uids = prompts.non_tensor_batch.get("uid")
            zoom = uids is not None and str(uids[0]).startswith("zoom-")
            rule = dict(choice=LETTERS) if zoom else dict(regex=COARSE)
            prompts.meta_info["structured_outputs"] = StructuredOutputsParams(**rule)
        out = DataProto.concat([self.rollout.generate_sequences(c) for c in prompts.chunk(self.world_size)])
        out.meta_info.pop("structured_outputs", None)
        self.outputs.append(out)
        return out

    def prepare_rollout_engine(self):
        pass

    def release_rollout_engine(self):
        pass


def load_actor_weights(rollout, model) -> None:
    """EasyR1's FSDPVLLMShardingManager.load_vllm_and_sync_weights less the FSDP gather: wake the engine, rename
    the actor's keys as EasyR1 does and load them into the model vLLM runs (the object EasyR1 loads into)."""
    from verl.workers.sharding_manager.fsdp_vllm import FSDPVLLMShardingManager

    engine = rollout.inference_engine
    engine.wake_up(tags=["weights"])
    weights = FSDPVLLMShardingManager._rename_weight_keys(None, dict(model.state_dict()), model)
    engine.llm_engine.model_executor.driver_worker.worker.model_runner.model.load_weights(iter(weights.items()))
    engine.wake_up(tags=["kv_cache"])


@pytest.fixture(scope="module")
def easyr1_setup(process_group, vllm_model_dir, tmp_path_factory):
    """Plugins active, the test recipe (EasyR1's PPOConfig) over two synthetic videos, tokenizer and processor."""
    from verl.utils.tokenizer import get_processor, get_tokenizer

    from tests.easyr1.conftest import RECIPE
    from zoomzero_plugin.hosts.easyr1.activation import activate
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    activate("pytest")
    rows = make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=2, seed=3)
    recipe = tmp_path_factory.mktemp("recipe") / "zoomzero_vllm.yaml"
    recipe.write_text(RECIPE.format(rows=rows, model=vllm_model_dir))
    overrides = ["worker.rollout.enforce_eager=true", "worker.rollout.dtype=fp32"]
    return dict(
        recipe=recipe,
        overrides=overrides,
        rows=rows,
        tokenizer=get_tokenizer(str(vllm_model_dir)),
        processor=get_processor(str(vllm_model_dir)),
    )


@pytest.fixture(scope="module")
def rollout(easyr1_setup, vllm_model_dir, vllm_hf_model):
    """EasyR1's vLLMRollout built by its own __init__ (engine arguments and all) on the CPU: one per module."""
    from verl.workers.rollout.vllm_rollout_spmd import vLLMRollout

    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    config = load_recipe(easyr1_setup["recipe"], easyr1_setup["overrides"])[0]
    rollout = vLLMRollout(
        str(vllm_model_dir), config.worker.rollout, easyr1_setup["tokenizer"], easyr1_setup["processor"]
    )
    load_actor_weights(rollout, vllm_hf_model)
    yield rollout
    release_engine(rollout)


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray of this module's own (``address="local"``: never a cluster already running on the machine) whose
    workers activate the plugins (EasyR1's reward manager actor runs there)."""
    import os

    import ray

    from tests.helpers import one_launch_at_a_time
    from zoomzero_plugin.hosts.easyr1.activation import ENV_HOOK

    with one_launch_at_a_time("ray.init"):
        os.environ["RAY_RUNTIME_ENV_HOOK"] = ENV_HOOK
        ray.init(
            address="local",
            num_cpus=4,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
        )
        yield
        ray.shutdown()
        os.environ.pop("RAY_RUNTIME_ENV_HOOK", None)


@pytest.fixture(scope="module")
def trainer(ray_local, easyr1_setup, rollout):
    import ray
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ray_trainer import RayPPOTrainer
    from verl.utils.dataset import collate_fn

    from tests.easyr1.helpers import reward_manager_class, rlhf_dataset
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    config = load_recipe(easyr1_setup["recipe"], easyr1_setup["overrides"])[0]
    tokenizer, processor = easyr1_setup["tokenizer"], easyr1_setup["processor"]
    dataset = rlhf_dataset(config, tokenizer, processor)
    loader = StatefulDataLoader(dataset, batch_size=2, num_workers=0, collate_fn=collate_fn, drop_last=True)
    reward = ray.remote(reward_manager_class()).options(num_cpus=0).remote(config.worker.reward, tokenizer)
    trainer = RayPPOTrainer(
        config=config,
        tokenizer=tokenizer,
        processor=processor,
        train_dataloader=loader,
        val_dataloader=loader,
        role_worker_mapping={},
        resource_pool_manager=None,
        reward_fn=reward,
        val_reward_fn=reward,
    )
    trainer.actor_rollout_ref_wg = RolloutWorkerGroup(rollout, tokenizer)
    trainer.data_iterator = iter(loader)
    trainer.truths = [GroundTruth.parse(r["answer"]) for r in read_rows(easyr1_setup["rows"])]
    return trainer


def video_tokens(frames: torch.Tensor) -> int:
    """Qwen2.5-VL context tokens of a (T, 3, H, W) clip: T/2 temporal patches of (H/28)·(W/28) merged patches."""
    t, _, h, w = frames.shape
    return (t // 2) * (h // 28) * (w // 28)


def test_training_step_runs_coarse_and_zoom_pass_on_vllm(trainer, easyr1_setup):
    from verl.utils.dataset import process_video

    tokenizer = easyr1_setup["tokenizer"]
    metrics = {}
    batch = trainer._make_batch_data(metrics)
    wg = trainer.actor_rollout_ref_wg
    assert len(batch) == 4 and len(wg.batches) == 2, "one coarse and one zoom generate_sequences call"

    # coarse pass: vLLM read as many tokens as EasyR1's actor holds for each prompt (same video tokens)
    coarse_requests = wg.requests[:2]
    actor_lengths = wg.batches[0].batch["attention_mask"].sum(-1).tolist()
    assert [len(r.prompt_token_ids) for _, r in coarse_requests] == actor_lengths
    assert all(p["mm_processor_kwargs"]["fps"] == pytest.approx(1.0) for p, _ in coarse_requests), "12 frames of 12 s"
    texts = tokenizer.batch_decode(batch.batch["responses"] * batch.batch["response_mask"], skip_special_tokens=True)
    assert all(re.fullmatch(COARSE, t) for t in texts), texts

    # zoom pass: one row per distinct (question, spans) (a group's identical requests are generated once),
    # padded to the 2 ranks; prompt = zoom text + the decoded clip's tokens
    keys = [(i // 2, re.search(r"<glue>(.*)</glue>", t).group(1)) for i, t in enumerate(texts)]
    distinct = list(dict.fromkeys(keys))
    zoom_in = wg.batches[1]
    zoom_requests = wg.requests[2:]
    assert len(zoom_requests) == len(zoom_in) == len(distinct) + len(distinct) % 2
    assert zoom_in.meta_info["temperature"] == 0.0 and metrics["zoom/requests"] == len(distinct)
    for raw, spec, (prompt, result) in zip(
        zoom_in.non_tensor_batch["raw_prompt_ids"], zoom_in.non_tensor_batch["multi_modal_data"], zoom_requests
    ):
        frames, fps = process_video(spec["videos"][0], None, None, 2.0, return_fps=True)
        assert frames.shape[0] == sum(clip["nframes"] for clip in spec["videos"][0]["clips"])  # the plan's frames
        assert len(result.prompt_token_ids) == len(raw) - 1 + video_tokens(frames)  # one <|video_pad|> expands
        assert prompt["mm_processor_kwargs"]["fps"] == pytest.approx(fps)

    # the zoom answers reach the reward: zoom = 1 exactly where the engine's letter for its request is the truth's
    letters = [tokenizer.decode(r.outputs[0].token_ids, skip_special_tokens=True).strip() for _, r in zoom_requests]
    assert set(letters) <= set(LETTERS)
    truths = [trainer.truths[i // 2] for i in range(4)]
    expected_zoom = [float(letters[distinct.index(k)] == t.answer) for k, t in zip(keys, truths)]
    assert batch.batch["reward_component/zoom"].tolist() == expected_zoom
    answers = [re.search(r"<answer>(.)</answer>", t).group(1) for t in texts]
    assert batch.batch["reward_component/accuracy"].tolist() == [float(a == t.answer) for a, t in zip(answers, truths)]
    assert metrics["reward/zoom"] == pytest.approx(np.mean(expected_zoom))
    assert metrics["zoom/zoomed_share"] == 1.0


def test_zoom_pass_is_greedy(trainer, easyr1_setup):
    """The same zoom batch twice, unsteered: vLLM's greedy tokens repeat exactly."""
    tokenizer = easyr1_setup["tokenizer"]
    hook = trainer._easyr1_plugins.hooks[0]
    batch = trainer._make_batch_data({})
    texts = tokenizer.batch_decode(batch.batch["responses"] * batch.batch["response_mask"], skip_special_tokens=True)
    requests = hook.plan(texts, batch.non_tensor_batch["ground_truth"], batch.non_tensor_batch["multi_modal_data"])
    wg = trainer.actor_rollout_ref_wg
    wg.steer = False
    try:
        runs = [wg.generate_sequences(hook.zoom_batch(requests)).batch for _ in range(2)]
    finally:
        wg.steer = True
    assert torch.equal(runs[0]["responses"], runs[1]["responses"])
    k = hook.options.max_new_tokens  # the pass's max_tokens reached vLLM: nothing but padding after k tokens
    assert (runs[0]["responses"][:, k:] == tokenizer.pad_token_id).all()


def test_zoom_clip_temporal_positions_equal_the_actors(rollout, easyr1_setup, tmp_path):
    """A zoom clip sampled at 8 frames / 3.5 s = 2.29 fps: the M-RoPE positions vLLM ran the prompt with equal
    those EasyR1 computes for its actor (RLHFDataset: second_per_grid_ts = 2 / sample fps, get_rope_index).
    Without the fps seam vLLM assumes 2 fps, which gives other temporal positions (checked as a control)."""
    from verl.models.transformers.qwen2_vl import get_rope_index
    from verl.utils.dataset import process_video

    from zoomzero_plugin.gvqa.zoom import ZoomBudget, plan_zoom
    from zoomzero_plugin.hosts.easyr1.clips import make_clip_spec
    from zoomzero_plugin.synthetic.videos import Evidence, write_video

    tokenizer, processor = easyr1_setup["tokenizer"], easyr1_setup["processor"]
    video = write_video(
        tmp_path / "v.mp4", duration=12.0, fps=4, width=224, height=168, evidence=(Evidence(3.0, 5.0, "red"),)
    )
    plan = plan_zoom(
        [(3.0, 6.5)], 12.0, ZoomBudget(max_visual_tokens=256, min_frame_pixels=3136, max_frame_pixels=50176, fps=2.0)
    )
    assert plan.frames == 8
    spec = make_clip_spec(str(video), plan.video_elements(str(video)), fetch_patch_size(plan.budget.factor))
    text = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Colour?"}]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    ids = tokenizer.encode(text, add_special_tokens=False)

    model = rollout.inference_engine.llm_engine.model_executor.driver_worker.worker.model_runner.model
    seen = []
    handle = model.register_forward_pre_hook(
        lambda m, args, kwargs: seen.append(kwargs["positions"].clone()), with_kwargs=True
    )
    try:
        rollout.generate_sequences(_one_prompt(ids, spec, tokenizer))
    finally:
        handle.remove()
    vllm_positions = seen[0]  # the prefill: (3, prompt tokens)

    frames, fps = process_video(spec, None, None, 2.0, return_fps=True)
    assert fps == pytest.approx(8 / 3.5)
    inputs = processor(videos=[frames], text=[text], add_special_tokens=False, return_tensors="pt")
    actor = get_rope_index(
        processor,
        input_ids=inputs["input_ids"][0],
        video_grid_thw=inputs["video_grid_thw"],
        second_per_grid_ts=[2.0 / fps],
        attention_mask=inputs["attention_mask"][0],
    )
    assert vllm_positions.shape == actor.shape
    assert torch.equal(vllm_positions, actor)
    # by hand: 4 temporal patches of 2 frames, 0.875 s each, 2 positions per second -> offsets 0, 1, 3, 5
    video_rows = inputs["input_ids"][0] == processor.tokenizer.convert_tokens_to_ids("<|video_pad|>")
    first = int(actor[0, video_rows].min())
    assert sorted(set((actor[0, video_rows] - first).tolist())) == [0, 1, 3, 5]
    assumed = get_rope_index(
        processor,
        input_ids=inputs["input_ids"][0],
        video_grid_thw=inputs["video_grid_thw"],
        second_per_grid_ts=[1.0],
        attention_mask=inputs["attention_mask"][0],
    )  # 2 fps
    assert not torch.equal(vllm_positions, assumed)


def _one_prompt(ids, spec, tokenizer):
    """A one-row generation batch as EasyR1's trainer hands it to the rollout (clip spec as the video)."""
    from verl.protocol import DataProto

    n = len(ids)
    raw = np.empty(1, dtype=object)
    raw[0] = ids
    videos = np.empty(1, dtype=object)
    videos[0] = {"videos": [spec]}
    return DataProto.from_dict(
        tensors={
            "input_ids": torch.tensor([ids]),
            "attention_mask": torch.ones(1, n, dtype=torch.long),
            "position_ids": torch.arange(n)[None],
        },
        non_tensors={"raw_prompt_ids": raw, "multi_modal_data": videos},
        meta_info={
            "min_pixels": None,
            "max_pixels": None,
            "video_fps": 2.0,
            "eos_token_id": tokenizer.eos_token_id,
            "n": 1,
            "temperature": 0.0,
            "max_tokens": 1,
        },
    )
