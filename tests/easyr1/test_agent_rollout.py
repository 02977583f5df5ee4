"""The VideoZoomer multi-turn rollout inside EasyR1's real trainer, and the acceptance test: EasyR1's own actor computes
the log-probs of the assembled multi-turn batch, and they equal the log-probs recorded while sampling.

Real: EasyR1's RayPPOTrainer._make_batch_data, RLHFDataset + collate_fn, DataProto, FSDPWorker.generate_sequences,
vLLMRollout.generate_sequences (one call per round), process_image, the reward manager as a Ray actor,
FSDPWorker._process_multi_modal_inputs, DataParallelPPOActor.compute_log_prob (padding_free off: flash-attn's unpad
does not exist on CPU; transformers' own Qwen2.5-VL forward with sdpa attention, float32, as EasyR1 runs it with
padding_free off). Stand-in: the engine (the tiny HF model, guided to emit scripted turns, recording its raw
log-probs) behind a worker group of two ranks.
"""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from zoomzero_plugin.agent import get_prompts, question_text
from zoomzero_plugin.agent.render import QWEN_IMAGE
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.synthetic.videos import Evidence, write_video

from .helpers import reward_manager_actor, rlhf_dataset
from .tiny_rollout import TinyEngine, TinyRolloutWorkerGroup

RECIPE = """\
data:
  train_files: {rows}
  val_files: {rows}
  prompt_key: prompt
  answer_key: answer
  video_key: videos
  max_prompt_length: 2048
  max_response_length: 1600
  rollout_batch_size: 2
  val_batch_size: 2
  video_fps: 0.5
  min_pixels: 3136
  max_pixels: 12544
  shuffle: false
  filter_overlong_prompts: false
algorithm:
  adv_estimator: tokenadv
  use_kl_loss: true
worker:
  actor:
    global_batch_size: 2
    micro_batch_size_per_device_for_update: 1
    micro_batch_size_per_device_for_experience: 2
    model:
      model_path: {model}
  rollout:
    n: 4
    tensor_parallel_size: 1
    temperature: 1.0
    limit_images: 128
    val_override_config: {{n: 1, temperature: 0.0}}
  reward:
    reward_type: batch
    reward_function: zoomzero:videozoomer
    num_cpus: 0
    reward_function_kwargs:
      weights: {{accuracy: 0.9, format: 0.1, tool: 0.0}}
      agent: {{prompt: train, max_new_tokens: 160, max_response_tokens: 1600, sampling_logprobs: true}}
      tokenadv: {{over_turns: true}}
trainer:
  total_epochs: 1
  n_gpus_per_node: 1
  logger: [console]
  val_before_train: false
"""

DURATION, FPS = 20.0, 4
ZOOMZERO_INSTRUCTION = "Cite the time spans of your evidence in <glue>. "
QUESTIONS = [
    ("What colour is the square?", ("red", "green", "blue"), "A", [(6.0, 9.0)]),
    ("Which colour appears?", ("yellow", "red", "cyan"), "B", []),
]


def call(s, e, fps, k):
    return f'<think>s{k} look closer</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'


def answer(letter, k):
    return f"<think>s{k} seen</think><answer>{letter}</answer>"


# Per question, per sample: the scripted assistant turns (None: the model samples freely).
SCRIPTS = [
    {
        0: [answer("A", 0)],  # no clip
        1: [call(2, 6, 1, 1), answer("A", 1)],  # one clip of 4 frames
        2: [call(5, 7, 2, 2), call(0, 20, 2, 2), call(10, 14, 1, 2), answer("C", 2)],  # two clips, an error (40 frames)
        3: None,
    },
    {
        0: [
            call(0, 4, 1, 0),
            call(4, 8, 1, 0),
            call(8, 12, 1, 0),
            call(12, 16, 1, 0),
            call(16, 20, 1, 0),
        ],  # 5th: last round
        1: [call(3, 5, 2, 1), answer("B", 1)],
        2: ['<think>s2</think><video_zoom>{"segment": [1, 2], fps: 1}</video_zoom>', answer("B", 2)],  # bad JSON
        3: None,
    },
]


class AgentGuide:
    """Which question (its text), which sample (round 0: the engine's sample index; later: the ``s{k}`` of the
    sample's first turn), which round (assistant headers so far): the scripted turn, or free sampling.
    ``scripts[q][k]``: question ``q``'s sample ``k``'s turns (None: free sampling)."""

    def __init__(self, questions=None, scripts=None):
        self.questions, self.scripts = questions or QUESTIONS, scripts or SCRIPTS

    def __call__(self, text, media, k):
        q = next(i for i, (question, *_) in enumerate(self.questions) if question in text)
        head = "<|im_start|>assistant\n"
        turn = text.count(head) - 1
        if turn > 0:
            first = text[text.index(head) + len(head) :]
            k = int(first[len("<think>s")]) if first.startswith("<think>s") else 3
        script = self.scripts[q][k]
        return None if script is None or turn >= len(script) else script[turn]


@pytest.fixture(scope="module")
def agent_rows(tmp_path_factory):
    root = tmp_path_factory.mktemp("agent")
    rows = []
    for i, (question, options, letter, spans) in enumerate(QUESTIONS):
        evidence = [Evidence(6.0, 9.0, options[ord(letter) - 65])]
        video = write_video(root / f"v{i}.mp4", duration=DURATION, fps=FPS, width=112, height=84, evidence=evidence)
        truth = GroundTruth(letter, options, tuple(spans), DURATION, f"q{i}", question)
        # a Zoom-Zero style row prompt: the agent shows question_text of the answer JSON instead (one protocol)
        prompt = "<video>" + ZOOMZERO_INSTRUCTION + question_text(question, options).removeprefix("<video>")
        rows.append({"prompt": prompt, "videos": [str(video)], "answer": truth.to_json()})
    path = root / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def agent_recipe(agent_rows, easyr1_model_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("agent-recipe") / "videozoomer_test.yaml"
    path.write_text(RECIPE.format(rows=agent_rows, model=easyr1_model_dir))
    return path


def load(recipe, *overrides):
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    return load_recipe(recipe, overrides)[0]


@pytest.fixture(scope="module")
def reward_actor(ray_cluster, agent_recipe, easyr1_tokenizer):
    return reward_manager_actor(load(agent_recipe), easyr1_tokenizer)


def make_trainer(config, reward_actor, tokenizer, processor, model):
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ray_trainer import RayPPOTrainer
    from verl.utils.dataset import collate_fn

    dataset = rlhf_dataset(config, tokenizer, processor)
    loader = StatefulDataLoader(dataset, batch_size=2, num_workers=0, collate_fn=collate_fn, drop_last=True)
    trainer = RayPPOTrainer(
        config=config,
        tokenizer=tokenizer,
        processor=processor,
        train_dataloader=loader,
        val_dataloader=loader,
        role_worker_mapping={},
        resource_pool_manager=None,
        reward_fn=reward_actor,
        val_reward_fn=reward_actor,
    )
    engine = TinyEngine(model, processor, AgentGuide())
    trainer.actor_rollout_ref_wg = TinyRolloutWorkerGroup(config, tokenizer, engine, world_size=2)
    trainer.data_iterator = iter(loader)
    trainer.engine = engine
    return trainer


@pytest.fixture(scope="module")
def step(agent_recipe, reward_actor, easyr1_tokenizer, easyr1_processor, tiny_model):
    """One training batch through EasyR1's _make_batch_data (generation, rewards, TokenAdv's inputs)."""
    trainer = make_trainer(load(agent_recipe), reward_actor, easyr1_tokenizer, easyr1_processor, tiny_model)
    metrics = {}
    batch = trainer._make_batch_data(metrics)
    return SimpleNamespace(trainer=trainer, batch=batch, metrics=metrics)


def actor_log_probs(batch, model, processor, position_ids=None):
    """EasyR1's own actor: FSDPWorker._process_multi_modal_inputs, then DataParallelPPOActor.compute_log_prob."""
    from verl.workers.actor.config import ActorConfig
    from verl.workers.actor.dp_actor import DataParallelPPOActor
    from verl.workers.fsdp_workers import FSDPWorker

    data = batch.select(
        batch_keys=["input_ids", "attention_mask", "position_ids", "responses"],
        non_tensor_batch_keys=["multi_modal_data", "media_uid", "uid"],
        deepcopy=False,
    )
    if position_ids is not None:
        data.batch["position_ids"] = position_ids
    data.meta_info = {**batch.meta_info, "temperature": 1.0}
    worker = SimpleNamespace(_cache={}, processor=processor)
    FSDPWorker._process_multi_modal_inputs(worker, data)
    config = ActorConfig(
        padding_free=False,
        dynamic_batching=False,
        use_torch_compile=False,
        micro_batch_size_per_device_for_experience=4,
    )
    return DataParallelPPOActor(config, model).compute_log_prob(data), data


def groups(batch):
    """Samples in EasyR1's order: (question, k) per row."""
    return [(i // 4, i % 4) for i in range(len(batch))]


# -- the assembled batch -------------------------------------------------------------------------------------


def test_every_sample_follows_its_script_and_ends_as_the_protocol_says(step):
    stats = list(step.batch.non_tensor_batch["agent_stats"])
    by = {g: s for g, s in zip(groups(step.batch), stats)}
    assert (by[0, 0]["turns"], by[0, 0]["calls"], by[0, 0]["end"]) == (1, 0, "answer")
    assert (by[0, 1]["calls"], by[0, 1]["clip_frames"], by[0, 1]["end"]) == (1, 4, "answer")
    assert (by[0, 2]["turns"], by[0, 2]["calls"], by[0, 2]["errors"], by[0, 2]["clip_frames"]) == (4, 2, 1, 8)
    assert (by[1, 0]["turns"], by[1, 0]["calls"], by[1, 0]["end"]) == (5, 4, "last_round_call")
    assert (by[1, 2]["calls"], by[1, 2]["errors"], by[1, 2]["end"]) == (0, 1, "answer")
    assert all(not s["truncated"] for s in stats)


def test_the_first_prompt_is_the_agents_own(step, easyr1_tokenizer):
    first = step.trainer.engine.calls[0]["text"]
    system = get_prompts("train").system
    question, options, *_ = QUESTIONS[0]
    assert first.startswith(f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n<frame0_time0.00s>")
    assert question_text(question, options).removeprefix("<video>") in first and ZOOMZERO_INSTRUCTION not in first
    assert first.count(QWEN_IMAGE) == 10, "a 20-s video at 0.5 fps: 10 overview frames"


def test_one_engine_call_per_round(step):
    engine = step.trainer.engine
    # two ranks, one question each. Rank 0: round 0 (the prompt, n=4), then samples 1 and 2, then 2, then 2.
    # Rank 1: round 0, then samples 0, 1, 2, then sample 0 alone for rounds 2, 3 and 4 (its last-round call).
    assert engine.generations == [1, 2, 1, 1, 1, 3, 1, 1, 1]
    assert [c["sampling"].n for c in engine.calls] == [4, 1, 1, 1, 1, 4, 1, 1, 1, 1, 1, 1]
    assert all(
        c["sampling"].stop == ["</video_zoom>"] and c["sampling"].include_stop_str_in_output for c in engine.calls
    )


def test_each_trajectorys_later_turns_are_seeded_apart(step):
    """vLLM seeds a prompt's n first-turn samples ``seed + k``; after that each trajectory's turn is a request of its
    own, and with the generation's one seed for all, two trajectories at the same point (the same call, the same clip)
    would draw the same tokens (Qwen3-VL's VideoZoomer launch once did: no reward differed within a group). Turn ``t``
    of trajectory ``k`` of a rank's 4 is seeded ``4 t + k`` past it. Rank 0: samples 1 and 2 in round 1, then 2 in
    rounds 2 and 3; rank 1: samples 0, 1 and 2 in round 1, then 0 in rounds 2, 3 and 4 (as in the test above)."""
    seeds = [c["sampling"].seed for c in step.trainer.engine.calls]
    base = seeds[0]
    assert base is not None and seeds[5] == base, "both ranks' first turns: the generation's seed (vLLM adds k)"
    rank0 = [0, 4 + 1, 4 + 2, 8 + 2, 12 + 2]
    rank1 = [0, 4 + 0, 4 + 1, 4 + 2, 8 + 0, 12 + 0, 16 + 0]
    assert [s - base for s in seeds] == rank0 + rank1


def test_each_prompts_first_turns_are_seeded_apart(agent_recipe, easyr1_tokenizer, easyr1_processor, tiny_model):
    """Two prompts on one rank, n = 4: EasyR1 gives both the generation's one seed, and vLLM seeds a prompt's samples
    ``+ k``; two prompts alike would draw the same four first turns. By hand: prompt 0's first turns at the seed,
    prompt 1's 4 past it (its samples are the batch's 4th to 7th)."""
    engine = TinyEngine(tiny_model, easyr1_processor, AgentGuide())
    generate_two_prompts(agent_recipe, easyr1_tokenizer, easyr1_processor, engine, world_size=1)
    first = [c["sampling"] for c in engine.calls if c["sampling"].n == 4]
    assert len(first) == 2 and first[0].seed is not None
    assert first[1].seed - first[0].seed == 4


def test_observations_are_in_the_sequence_but_out_of_the_loss(step, easyr1_tokenizer):
    batch = step.batch
    mask, attention = batch.batch["response_mask"], batch.batch["attention_mask"][:, -mask_width(batch) :]
    image = easyr1_tokenizer.convert_tokens_to_ids("<|image_pad|>")
    responses = batch.batch["responses"]
    for i, (q, k) in enumerate(groups(batch)):
        holes = (attention[i] == 1) & (mask[i] == 0)
        observed = easyr1_tokenizer.decode(responses[i][holes].tolist(), skip_special_tokens=False)
        frames = batch.non_tensor_batch["agent_stats"][i]["clip_frames"]
        assert int((responses[i][holes] == image).sum()) == frames * 12, "each 112x84 frame: a 3x4 merged grid"
        assert int((responses[i][mask[i] == 1] == image).sum()) == 0, "no image token is ever in the loss"
        if (q, k) == (0, 0):
            assert not holes.any()
        if (q, k) == (0, 2):
            clip_open = get_prompts("train").clip_open
            assert observed.count(clip_open) == 2 and observed.count("Error:") + observed.count("ERROR") == 1
    # the extent of each response ends on a sampled token (never inside an observation)
    last = attention.sum(-1) - 1
    assert all(mask[i, int(last[i])] == 1 for i in range(len(batch)))


def mask_width(batch):
    return batch.batch["response_mask"].size(-1)


def test_every_sample_carries_its_own_media(step, easyr1_processor):
    batch = step.batch
    media = batch.non_tensor_batch["multi_modal_data"]
    picks = [[(r["video"], r["frames"][r["pick"]]) for r in m["images"]] for m in media]
    assert picks[1] != picks[2], "two samples of one prompt saw different clips"
    uids = batch.non_tensor_batch["media_uid"]
    for i in range(len(batch)):  # one key per distinct media list: shared only by samples that saw the same images
        for j in range(len(batch)):
            assert (uids[i] == uids[j]) == (picks[i] == picks[j] and i // 4 == j // 4)
    assert uids[0] == uids[3] != uids[1], "question 0: samples 0 and 3 saw the overview only"
    _, data = actor_log_probs(batch[:4], step.trainer.engine.model, easyr1_processor)
    inputs = data.non_tensor_batch["multi_modal_inputs"]
    for i in range(4):
        tokens = int(
            (data.batch["input_ids"][i] == easyr1_processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")).sum()
        )
        assert int(inputs[i]["image_grid_thw"].prod(-1).sum()) // 4 == tokens, "media and placeholders agree per sample"
    assert inputs[1]["pixel_values"].shape != inputs[2]["pixel_values"].shape


# -- the acceptance test: training log-probs equal sampling log-probs --------------------------------------------


def test_actor_log_probs_equal_the_sampling_log_probs(step, easyr1_processor):
    batch = step.batch
    log_probs, _ = actor_log_probs(batch, step.trainer.engine.model, easyr1_processor)
    sampled = batch.batch["response_mask"].bool()
    recorded = batch.batch["rollout_log_probs"]
    assert sampled.sum() > 500
    diff = (log_probs - recorded)[sampled].abs()
    assert diff.max() < 1e-5, f"max |actor - sampler| = {diff.max():.2e}"  # measured here: <= 1e-6 (float32)
    assert (recorded[~sampled] == 0).all()


def test_linear_response_positions_would_break_the_equality(step, easyr1_processor):
    """EasyR1's single-turn rule (linear positions after the prompt) gives different log-probs after a clip."""
    batch = step.batch[:4]
    positions = batch.batch["position_ids"].clone()
    width = mask_width(batch)
    prompt = positions[:, :, :-width]
    positions[:, :, -width:] = prompt[..., -1:] + torch.arange(1, width + 1)
    linear, _ = actor_log_probs(batch, step.trainer.engine.model, easyr1_processor, positions)
    sampled = batch.batch["response_mask"].bool()
    diff = (linear - batch.batch["rollout_log_probs"]).abs()
    assert diff[0][sampled[0]].max() < 1e-5, "no image in sample 0's response: linear positions are right there"
    for i in (1, 2):  # they saw clips: every turn after one needs M-RoPE over its images (measured: 1.6e-4, 2e-4)
        assert diff[i][sampled[i]].max() > 1e-4, f"sample {i}: linear positions went unnoticed"


# -- rewards, advantages, logs ------------------------------------------------------------------------------


def test_rewards_score_the_whole_exchange_on_its_last_sampled_token(step):
    batch = step.batch
    comp = {k: batch.batch[f"reward_component/{k}"].tolist() for k in ("accuracy", "format", "tool", "grounding")}
    assert comp["accuracy"][:3] == [1.0, 1.0, 0.0] and comp["format"][:3] == [1.0, 1.0, 0.0]
    assert comp["accuracy"][5:7] == [1.0, 1.0] and comp["format"][5:7] == [1.0, 0.0]
    # question 0 has spans [6, 9]: grounding is the IoU of the looked-at segments; sample 1 looked at [2, 6]
    assert comp["grounding"][0] == 0.0 and comp["grounding"][1] == 0.0
    assert comp["grounding"][2] == pytest.approx(1 / 8)  # [5, 7] ∪ [10, 14] vs [6, 9]: 1 s / (6 + 3 − 1) s
    assert comp["grounding"][5] == 1.0, "question 1 has no spans: grounding is the tool term"
    scores = batch.batch["token_level_scores"]
    attention = batch.batch["attention_mask"][:, -mask_width(batch) :]
    last = attention.sum(-1) - 1
    assert scores.sum(-1).tolist()[:3] == pytest.approx([1.0, 1.0, 0.0])
    assert all(scores[i, int(last[i])] == scores[i].sum() for i in range(len(batch)))


def test_tokenadv_over_turns_gives_call_and_answer_tokens_their_own_advantages(step):
    from verl.trainer import ray_trainer

    batch = step.batch
    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
    batch = ray_trainer.compute_advantage(batch, adv_estimator="tokenadv", gamma=1.0, lam=1.0)
    adv, mask, calls = batch.batch["advantages"], batch.batch["response_mask"].bool(), batch.batch["glue_mask"]
    assert not (calls & ~mask).any(), "call tokens are sampled tokens"
    assert (adv[~mask] == 0).all(), "observation tokens and padding get nothing"
    assert calls[1].any() and not calls[0].any()
    assert len(adv[1][calls[1]].unique()) == 1 and len(adv[1][mask[1] & ~calls[1]].unique()) == 1
    assert adv[1][calls[1]][0] != adv[1][mask[1] & ~calls[1]][0]


def test_grpo_as_shipped_gives_each_trajectory_its_group_advantage_on_its_sampled_tokens(step):
    """yamls/videozoomer.yaml's estimator, EasyR1's own grpo, on the multi-turn batch: every sampled token of a
    trajectory gets its group-normalised score (mean and sample std over the question's 4 trajectories, eps 1e-6),
    observation tokens and padding get 0."""
    import copy

    from verl.trainer import ray_trainer

    batch = copy.deepcopy(step.batch)
    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
    adv = ray_trainer.compute_advantage(batch, adv_estimator="grpo", gamma=1.0, lam=1.0).batch["advantages"]
    mask = batch.batch["response_mask"].bool()
    attention = batch.batch["attention_mask"][:, -mask_width(batch) :].bool()
    assert (attention & ~mask).any(), "some trajectories hold observations"
    scores = batch.batch["token_level_scores"].sum(-1).tolist()
    for q in range(len(batch) // 4):
        group = scores[4 * q : 4 * q + 4]
        mean = sum(group) / 4
        std = (sum((x - mean) ** 2 for x in group) / 3) ** 0.5
        for i in range(4 * q, 4 * q + 4):
            expected = (scores[i] - mean) / (std + 1e-6)
            assert adv[i][mask[i]].tolist() == pytest.approx([expected] * int(mask[i].sum()), abs=1e-5)
    assert (adv[~mask] == 0).all(), "observation tokens and padding get nothing"


def test_agent_metrics_are_logged(step):
    m = step.metrics
    assert m["agent/calls"] == pytest.approx(np.mean([0, 1, 2, 0, 4, 1, 0, 0]))
    assert m["agent/truncated"] == 0.0 and m["agent/turns"] > 1
    assert m["agent/accuracy_calls_4"] == 0.0 and "agent/accuracy_calls_1" in m
    assert "reward/grounding" in m and "reward/accuracy" in m


def test_validation_runs_the_agent_greedily(agent_recipe, reward_actor, easyr1_tokenizer, easyr1_processor, tiny_model):
    trainer = make_trainer(load(agent_recipe), reward_actor, easyr1_tokenizer, easyr1_processor, tiny_model)
    metrics = trainer._validate()
    first = trainer.engine.calls[0]["sampling"]
    assert (first.n, first.temperature) == (1, 0.0)
    assert "val/agent/calls" in metrics and "val/accuracy_reward" in metrics


# -- truncation at a turn boundary ------------------------------------------------------------------------------


def expected_budget(tokenizer, video):
    """Tokens of question 0 / sample 2's first two turns and first observation, from the protocol's own texts:
    a budget that holds them and 5 more tokens, so its second observation (an error text) cannot fit."""
    turns = SCRIPTS[0][2]
    second = len(tokenizer.encode(turns[1], add_special_tokens=False))
    return expected_turn_and_observation(tokenizer, video, turns[0], frame_tokens=12) + second + 5


def generate_two_prompts(agent_recipe, tokenizer, processor, engine, world_size=2, max_response_tokens=None):
    """The recipe's two prompts through the VideoZoomer rollout on ``engine`` (no trainer: the worker group of
    ``world_size`` ranks), with ``max_response_tokens`` (default: the recipe's)."""
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.protocol import DataProto
    from verl.utils.dataset import collate_fn

    from zoomzero_plugin.hosts.easyr1.generation import RoutedWorkerGroup, mark_row_fields
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import ROLLOUT
    from zoomzero_plugin.hosts.options import AgentOptions

    config = load(agent_recipe)
    loader = StatefulDataLoader(rlhf_dataset(config, tokenizer, processor), batch_size=2, collate_fn=collate_fn)
    mark_row_fields([loader], ROLLOUT.row_fields)  # what the trainer's __init__ does for the rollout
    batch = DataProto.from_single_dict(
        next(iter(loader)), meta_info={"min_pixels": 3136, "max_pixels": 12544, "video_fps": 0.5}
    )
    gen = batch.pop(
        batch_keys=["input_ids", "attention_mask", "position_ids"],
        non_tensor_batch_keys=["raw_prompt_ids", "multi_modal_data"],
        meta_info_keys=["min_pixels", "max_pixels", "video_fps"],
    )
    options = AgentOptions.from_section(
        {"max_new_tokens": 160, "max_response_tokens": max_response_tokens or 1600, "sampling_logprobs": True}
    )
    workers = TinyRolloutWorkerGroup(config, tokenizer, engine, world_size=world_size)
    return RoutedWorkerGroup(workers, ROLLOUT, options.to_section()).generate_sequences(gen)


@pytest.fixture(scope="module")
def truncated(agent_recipe, agent_rows, easyr1_tokenizer, easyr1_processor, tiny_model):
    """The same prompts generated with a response budget that cuts trajectories (no trainer: the worker group)."""
    video = json.loads(agent_rows.read_text().splitlines()[0])["videos"][0]
    total = expected_budget(easyr1_tokenizer, video)
    engine = TinyEngine(tiny_model, easyr1_processor, AgentGuide())
    batch = generate_two_prompts(agent_recipe, easyr1_tokenizer, easyr1_processor, engine, max_response_tokens=total)
    return SimpleNamespace(batch=batch, total=total, model=tiny_model)


def test_a_response_over_budget_is_cut_at_a_turn_boundary(truncated, easyr1_tokenizer, easyr1_processor):
    batch, total = truncated.batch, truncated.total
    stats = batch.non_tensor_batch["agent_stats"]
    mask = batch.batch["response_mask"]
    extent = batch.batch["attention_mask"][:, -mask.size(-1) :].sum(-1)
    assert (extent <= total).all()
    s = stats[2]  # question 0, sample 2: its first clip fits, its second observation (an error) does not
    assert (s["calls"], s["turns"], s["end"], s["truncated"]) == (1, 2, "total_tokens", True)
    ids = batch.batch["responses"][2][: int(extent[2])]
    assert easyr1_tokenizer.decode(ids.tolist()).endswith(SCRIPTS[0][2][1]), "the response ends on the sampled call"
    assert mask[2, int(extent[2]) - 1] == 1
    image = easyr1_tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert int((ids == image).sum()) == 4 * 12, "the one clip that fit is whole: no vision block is cut"
    assert stats[0]["end"] == "answer" and not stats[0]["truncated"]
    # the log-prob equality holds on cut trajectories too
    log_probs, _ = actor_log_probs(batch, truncated.model, easyr1_processor)
    sampled = mask.bool()
    assert (log_probs - batch.batch["rollout_log_probs"])[sampled].abs().max() < 1e-5


@pytest.mark.parametrize("spare, appended", [(0, False), (1, True)])
def test_an_observation_is_appended_only_with_room_for_one_more_token(
    spare, appended, agent_rows, easyr1_tokenizer, easyr1_processor
):
    """The rule at its threshold: after a call turn of T tokens and an observation of O tokens, a budget of
    T + O leaves no room for a sampled token (the observation is not appended and not counted, the trajectory ends
    at max_response_tokens); T + O + 1 leaves exactly one (it is appended, and the next turn may generate 1 token)."""
    from zoomzero_plugin.hosts.easyr1.generation import ROW_FIELDS_KEY
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import AgentRollout
    from zoomzero_plugin.hosts.options import AgentOptions

    row = json.loads(agent_rows.read_text().splitlines()[0])
    turn = SCRIPTS[0][1][0]  # call(2, 6, 1): 4 frames of 112x84 -> 4 x 3 merged patches = 12 tokens each
    total = expected_turn_and_observation(easyr1_tokenizer, row["videos"][0], turn, frame_tokens=12) + spare
    section = {"prompt": "train", "max_new_tokens": 160, "max_response_tokens": total}
    options = AgentOptions.from_section(section)
    worker = SimpleNamespace(
        tokenizer=easyr1_tokenizer, processor=easyr1_processor, prompt_length=2048, response_length=total
    )
    rollout = AgentRollout(worker, options)
    media = {"videos": row["videos"], ROW_FIELDS_KEY: {"ground_truth": row["answer"]}}
    (sample,) = rollout.start([], media, 1)
    ids = easyr1_tokenizer.encode(turn, add_special_tokens=False)
    rollout.advance([sample], [SimpleNamespace(token_ids=ids, logprobs=None)])
    pieces = sample.conversation.response
    # a withheld observation does not count: the call and its 4 frames only when the clip was appended
    assert (sample.trajectory.calls, sample.trajectory.clip_frames) == ((1, 4) if appended else (0, 0))
    if appended:
        assert len(pieces) == 2 and not sample.truncated and sample.active
        assert sample.conversation.response_tokens == total - 1 and rollout.limit(sample) == 1
    else:
        assert len(pieces) == 1 and sample.truncated and sample.trajectory.end == "total_tokens"
        assert sample.conversation.response_tokens == len(ids)


def expected_turn_and_observation(tokenizer, video, turn, frame_tokens):
    """Tokens of one call turn and the observation that answers it, from the protocol's own texts (each frame's
    one image pad expanded to ``frame_tokens``)."""
    from zoomzero_plugin.agent import Trajectory
    from zoomzero_plugin.agent.frames import FrameReader
    from zoomzero_plugin.agent.render import IM_END, observation_block

    observation = Trajectory(FrameReader(str(video)).info, prompts=get_prompts("train")).step(turn).observation
    text = IM_END + observation_block(observation.text(QWEN_IMAGE))
    obs_tokens = len(tokenizer.encode(text, add_special_tokens=False)) + len(observation.frames) * (frame_tokens - 1)
    return len(tokenizer.encode(turn, add_special_tokens=False)) + obs_tokens


@pytest.mark.parametrize("truth", ["B", "B.", " (B) ", "b"])
def test_a_bare_letter_truth_shows_the_rows_own_prompt(truth):
    """The reward reads "B." (the authors' data writes a period after the letter); the rollout's first user turn
    reads it as a bare letter too, not as answer JSON (which once failed: 'ground truth is not JSON')."""
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import user_text

    assert user_text(truth, lambda: "the row's prompt") == "the row's prompt"
    answer = GroundTruth(answer="A", options=("red", "blue"), spans=(), duration=9.0, qid="q", question="Which?")
    assert user_text(answer.to_json(), lambda: "unused") == question_text("Which?", ["red", "blue"])


def rollout_of(agent_rows, tokenizer, processor, turn_tokens, total_tokens, response_length=None):
    from zoomzero_plugin.hosts.easyr1.generation import ROW_FIELDS_KEY
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import AgentRollout
    from zoomzero_plugin.hosts.options import AgentOptions

    row = json.loads(agent_rows.read_text().splitlines()[0])
    options = AgentOptions.from_section(
        {"prompt": "train", "max_new_tokens": turn_tokens, "max_response_tokens": total_tokens}
    )
    worker = SimpleNamespace(
        tokenizer=tokenizer, processor=processor, prompt_length=2048, response_length=response_length or total_tokens
    )
    rollout = AgentRollout(worker, options)
    (sample,) = rollout.start([], {"videos": row["videos"], ROW_FIELDS_KEY: {"ground_truth": row["answer"]}}, 1)
    return rollout, sample


def test_the_response_width_bounds_the_total_budget(agent_rows, easyr1_tokenizer, easyr1_processor):
    rollout, sample = rollout_of(agent_rows, easyr1_tokenizer, easyr1_processor, 4096, 32768, response_length=500)
    assert rollout.limit(sample) == 500  # data.max_response_length below total_tokens


@pytest.mark.parametrize(
    "room, cut, end, calls",
    [
        ("exact", False, "total_tokens", 0),  # a whole call of exactly the tokens left: read as a call, its clip
        # withheld (no room after it), so not counted
        ("short", True, "total_tokens", 0),  # cut by the total budget (left == turn_tokens): it ends there
        ("turn", False, "no_answer", 0),  # cut by turn_tokens with total to spare: read as it stands
    ],
)
def test_a_turn_at_the_last_of_the_budget(room, cut, end, calls, agent_rows, easyr1_tokenizer, easyr1_processor):
    """A call turn of T tokens: with T left and T a turn, the whole call came back (it ends with </video_zoom>),
    not a cut one; T - 3 tokens of it with T - 3 left is cut by the total budget; T - 3 with a turn budget of
    T - 3 and a large total is a turn the turn budget stopped, read as it stands (an unfinished call)."""
    ids = easyr1_tokenizer.encode(SCRIPTS[0][1][0], add_special_tokens=False)
    n = len(ids) if room == "exact" else len(ids) - 3
    rollout, sample = rollout_of(agent_rows, easyr1_tokenizer, easyr1_processor, n, n if room != "turn" else 4096)
    rollout.advance([sample], [SimpleNamespace(token_ids=ids[:n], logprobs=None)])
    assert (sample.truncated, sample.trajectory.end, sample.trajectory.calls) == (cut or room == "exact", end, calls)
    assert (sample.trajectory.steps[0].turn.call is not None) == (room == "exact")  # only the whole call was one


def test_a_turn_ending_with_eos_is_read_without_it(agent_rows, easyr1_tokenizer, easyr1_processor):
    ids = easyr1_tokenizer.encode(answer("A", 0), add_special_tokens=False) + [easyr1_tokenizer.eos_token_id]
    rollout, sample = rollout_of(agent_rows, easyr1_tokenizer, easyr1_processor, 4096, 32768)
    rollout.advance([sample], [SimpleNamespace(token_ids=ids, logprobs=None)])
    turn = sample.trajectory.steps[0].turn
    assert turn.format_ok and turn.letter == "A" and sample.trajectory.end == "answer"


def test_the_frame_cache_is_made_again_when_its_size_changes():
    from zoomzero_plugin.hosts.easyr1 import frame_refs
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import frame_cache

    before = frame_refs.installed()
    try:
        one = frame_cache(1)
        assert frame_cache(1) is one and one.max_bytes == 1 << 20
        assert frame_cache(2).max_bytes == 2 << 20 and frame_refs.installed().max_bytes == 2 << 20
    finally:
        frame_refs._installed[:] = [before] if before is not None else []


def test_a_prompt_must_show_exactly_one_video():
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import question_of

    video = "<|vision_start|><|video_pad|><|vision_end|>"
    assert question_of(f"<|im_start|>user\n{video}Which?<|im_end|>") == "<video>Which?"
    for shown in ("", video * 2):
        with pytest.raises(ValueError, match=f"shows {len(shown) // len(video)} videos"):
            question_of(f"<|im_start|>user\n{shown}Which?<|im_end|>")


def test_a_first_prompt_of_exactly_max_prompt_length_is_accepted(
    agent_rows, easyr1_tokenizer, easyr1_processor, monkeypatch
):
    from zoomzero_plugin.hosts.easyr1.zoomzero import agent_rollout, checks
    from zoomzero_plugin.hosts.options import AgentOptions

    row = json.loads(agent_rows.read_text().splitlines()[0])
    options = AgentOptions.from_section({"prompt": "train"})
    text = agent_rollout.user_text(row["answer"], lambda: row["prompt"])
    tokens = checks.measure_first_prompt(easyr1_tokenizer, easyr1_processor, row["videos"][0], text, options).tokens
    monkeypatch.setattr(checks, "local_processor", lambda config: (easyr1_tokenizer, easyr1_processor))

    def config(limit):
        data = SimpleNamespace(
            prompt_key="prompt", video_key="videos", answer_key="answer", max_prompt_length=limit, image_dir=None
        )
        return SimpleNamespace(data=data)

    assert checks.agent_row_problems(config(tokens), [row], "train", options) == []
    (problem,) = checks.agent_row_problems(config(tokens - 1), [row], "train", options)
    assert f"is {tokens} tokens" in problem and f"max_prompt_length={tokens - 1}" in problem
