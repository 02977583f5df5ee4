"""The zoom rollout hook inside EasyR1's real RayPPOTrainer._make_batch_data and _validate.

Real: EasyR1's trainer, RLHFDataset + collate_fn, DataProto, vLLMRollout.generate_sequences, its (patched)
process_video, the reward manager as a Ray actor in its own process, compute_advantage. Stand-in: the engine
(the tiny HF model, guided to emit chosen responses) behind a worker group of two ranks.
"""

import pytest
import torch

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.prompts import PAPER_INSTRUCTION, paper_options
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic.videos import dominant_color

from .helpers import reward_manager_actor, rlhf_dataset
from .tiny_rollout import TinyEngine, TinyRolloutWorkerGroup

DURATION = 12.0


def response(letter, spans):
    glue = ", ".join(f"({s:.1f}, {e:.1f})" for s, e in spans)
    think = f"I see the square at <time>({spans[0][0]:.1f}, {spans[0][1]:.1f})</time>."
    return f"<think>{think}</think><answer>{letter}</answer><glue>[{glue}]</glue>"


def wrong_span(truth):
    start, end = truth.spans[0]
    return (0.0, 1.0) if start >= 2.0 else (DURATION - 1.0, DURATION)


def wrong_letter(truth):
    return "A" if truth.answer != "A" else "B"


class Guide:
    """Question 0: sample 0 right (answer + evidence span), sample 1 right answer but a span without evidence.
    Question 1: sample 0 right, sample 1 no template at all.

    The zoom pass answers from the frames it was given: the letter of the colour it sees, else a wrong letter.
    """

    def __init__(self, truths):
        self.truths = truths

    def truth_of(self, text):
        return next(i for i, t in enumerate(self.truths) if paper_options(t.options) in text)

    def __call__(self, text, frames, k):
        q = self.truth_of(text)
        truth = self.truths[q]
        if PAPER_INSTRUCTION[:40] not in text:  # the zoom prompt
            seen = {dominant_color(f.permute(1, 2, 0).numpy()) for f in frames} - {None}
            letters = [chr(65 + i) for i, o in enumerate(truth.options) if o in seen]
            return letters[0] if letters else wrong_letter(truth)
        if k == 0:
            return response(truth.answer, truth.spans)
        return response(truth.answer, [wrong_span(truth)]) if q == 0 else "I am not sure."


@pytest.fixture(scope="module")
def reward_actor(ray_cluster, recipe_path, easyr1_tokenizer):
    """One reward-manager actor for the module (starting a Ray worker costs seconds here)."""
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    return reward_manager_actor(load_recipe(recipe_path)[0], easyr1_tokenizer)


@pytest.fixture
def trainer(reward_actor, ppo_config, easyr1_tokenizer, easyr1_processor, tiny_model, benchmark_rows):
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ray_trainer import RayPPOTrainer
    from verl.utils.dataset import collate_fn

    data = ppo_config.data
    dataset = rlhf_dataset(ppo_config, easyr1_tokenizer, easyr1_processor)
    loader = StatefulDataLoader(
        dataset, batch_size=data.rollout_batch_size, num_workers=0, collate_fn=collate_fn, drop_last=True
    )
    val_loader = StatefulDataLoader(dataset, batch_size=data.val_batch_size, num_workers=0, collate_fn=collate_fn)
    truths = [GroundTruth.parse(r["answer"]) for r in read_rows(benchmark_rows)]
    engine = TinyEngine(tiny_model, easyr1_processor, Guide(truths))
    trainer = RayPPOTrainer(
        config=ppo_config,
        tokenizer=easyr1_tokenizer,
        processor=easyr1_processor,
        train_dataloader=loader,
        val_dataloader=val_loader,
        role_worker_mapping={},
        resource_pool_manager=None,
        reward_fn=reward_actor,
        val_reward_fn=reward_actor,
    )
    trainer.actor_rollout_ref_wg = TinyRolloutWorkerGroup(ppo_config, easyr1_tokenizer, engine, world_size=2)
    trainer.data_iterator = iter(loader)
    trainer.truths, trainer.engine = truths, engine
    return trainer


def pixels(frames):
    return int(frames.shape[-1] * frames.shape[-2])


def test_zoom_pass_rewards_and_tokenadv_flow_through_make_batch_data(trainer):
    from verl.trainer import ray_trainer

    metrics = {}
    batch = trainer._make_batch_data(metrics)
    wg, engine = trainer.actor_rollout_ref_wg, trainer.engine
    assert len(batch) == 4 and len(wg.batches) == 2, "one coarse and ONE zoom generate_sequences call"

    coarse, zoom = wg.batches
    assert len(zoom) == 4 and zoom.meta_info["n"] == 1 and zoom.meta_info["temperature"] == 0.0
    assert zoom.meta_info["max_tokens"] == 4, "3 zoom rows, padded to the 2 workers"
    assert not set(zoom.non_tensor_batch["uid"]) & set(batch.non_tensor_batch["uid"])
    assert len(set(zoom.non_tensor_batch["uid"][:3])) == 3

    coarse_calls = [c for c in engine.calls if c["sampling"].n == 2]
    zoom_calls = [c for c in engine.calls if c["sampling"].n == 1]
    assert len(coarse_calls) == 2 and len(zoom_calls) == 4
    coarse_px = {pixels(c["frames"]) for c in coarse_calls}
    assert all(pixels(c["frames"]) > max(coarse_px) for c in zoom_calls), "zoom frames get more tokens per frame"
    assert all(c["frames"].shape[0] == 12 for c in coarse_calls)  # 12 s at data.video_fps 1.0

    # Zoom rows in batch order: q0 right span, q0 wrong span, q1 right span (+ padding = a copy of the first).
    truths = [trainer.truths[0], trainer.truths[0], trainer.truths[1]]
    evidence = [{dominant_color(f.permute(1, 2, 0).numpy()) for f in c["frames"]} - {None} for c in zoom_calls[:3]]
    assert evidence[0] == {truths[0].options[ord(truths[0].answer) - 65]}
    assert evidence[1] == set(), "the wrong span's frames hold no evidence: only span frames were decoded"
    assert evidence[2] == {truths[2].options[ord(truths[2].answer) - 65]}
    # Eq. 3 over the predicted spans at the recipe's zoom fps 2.0 (L_v = 256 tokens, V_min = 2 tokens, so the
    # budget does not bind): synth000's (6.1, 7.6) is 1.5 s → 3 frames, rounded to an even count → 4;
    # synth001's (0.6, 3.6) is 3 s → 6 frames.
    assert [(t.qid, t.spans) for t in (truths[0], truths[2])] == [
        ("synth000", ((6.1, 7.6),)),
        ("synth001", ((0.6, 3.6),)),
    ]
    assert [c["frames"].shape[0] for c in zoom_calls[:3:2]] == [4, 6]

    comp = {k: batch.batch[f"reward_component/{k}"].tolist() for k in ("format", "iou", "accuracy", "zoom")}
    assert comp["zoom"] == [1.0, 0.0, 1.0, 0.0]
    assert comp["accuracy"] == [1.0, 1.0, 1.0, 0.0]
    assert comp["format"] == [1.0, 1.0, 1.0, 0.0]
    assert comp["iou"][0] == pytest.approx(1.0) and comp["iou"][1] == 0.0
    lengths = batch.batch["response_mask"].sum(-1)
    scores = batch.batch["token_level_scores"]
    assert scores.sum(-1).tolist() == pytest.approx([1.0, 0.5, 1.0, 0.0])
    assert all(scores[i, int(lengths[i]) - 1] == scores[i].sum() for i in range(4)), "overall on the last token"
    assert metrics["reward/zoom"] == pytest.approx(0.5) and metrics["reward/overall"] == pytest.approx(0.625)
    assert metrics["zoom/valid_span_share"] == 0.75 and metrics["zoom/accuracy"] == pytest.approx(2 / 3)
    assert metrics["zoom/zoom_tokens_per_frame"] > metrics["zoom/coarse_tokens_per_frame"]

    glue = batch.batch["glue_mask"]
    assert glue[0].any() and not glue[3].any() and not (glue & ~batch.batch["response_mask"].bool()).any()

    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]  # fit(): KL as a loss
    batch = ray_trainer.compute_advantage(batch, adv_estimator="tokenadv", gamma=1.0, lam=1.0)
    adv = batch.batch["advantages"]
    assert torch.equal(adv, batch.batch["returns"])
    assert (adv[0][batch.batch["response_mask"][0].bool()] > 0).all(), "the right response learns up everywhere"
    assert (adv[1][batch.batch["response_mask"][1].bool()] < 0).all()
    assert (adv * (1 - batch.batch["response_mask"])).abs().sum() == 0
    # Question 0 differs in iou and zoom only: glue tokens get mean(A_format, A_zoom, A_iou) = 2/3, the others
    # mean(A_format, A_zoom, A_accuracy) = 1/3 (Eq. 5; a component equal across the group has advantage 0).
    answer_tokens = ~glue[0] & batch.batch["response_mask"][0].bool()
    assert adv[0][glue[0]].unique().tolist() == pytest.approx([2 / 3], abs=1e-4)
    assert adv[0][answer_tokens].unique().tolist() == pytest.approx([1 / 3], abs=1e-4)


def test_validation_reports_zoom_accuracy(trainer):
    metrics = trainer._validate()
    assert len(trainer.actor_rollout_ref_wg.batches) == 2  # validation's own generation + one zoom pass
    assert metrics["val/zoom_reward"] == pytest.approx(1.0)  # n=1 in validation: every guided answer is right
    assert metrics["val/zoom/accuracy"] == pytest.approx(1.0)
    assert metrics["val/zoom/valid_span_share"] == pytest.approx(1.0)
    assert "val/accuracy_reward" in metrics and "val/reward_score" in metrics


def test_online_filtering_filters_on_scores_that_include_the_zoom_reward(trainer):
    """EasyR1 calls the reward manager itself while it builds the batch: the hook runs there, once."""
    trainer.config.algorithm.online_filtering = True
    trainer.config.algorithm.filter_low, trainer.config.algorithm.filter_high = 0.01, 0.7  # drops question 0 (0.75)
    trainer.config.trainer.max_try_make_batch = 1
    with pytest.raises(RuntimeError, match="Generated too many"):  # one group of two survives: not enough
        trainer._make_batch_data({})
    wg = trainer.actor_rollout_ref_wg
    assert len(wg.batches) == 2, "one coarse and one zoom pass: the step ran once, inside EasyR1's filter"
    trainer.config.algorithm.filter_high = 0.99
    trainer.data_iterator = iter(trainer.train_dataloader)
    metrics = {}
    batch = trainer._make_batch_data(metrics)
    assert len(batch) == 4 and len(wg.batches) == 4
    assert batch.batch["token_level_scores"].sum(-1).tolist() == pytest.approx([1.0, 0.5, 1.0, 0.0])
    assert metrics["reward/zoom"] == pytest.approx(0.5) and metrics["zoom/accuracy"] == pytest.approx(2 / 3)
    assert batch.batch["reward_component/zoom"].tolist() == [1.0, 0.0, 1.0, 0.0] and "glue_mask" in batch.batch


def test_each_step_samples_with_its_own_seed(trainer):
    """EasyR1 hands vLLM worker.rollout.seed for every request of every step (the same draws each step); the host
    seeds step s's k-th generation with seed + 1000 * s + k and puts everything back afterwards."""
    trainer.config.worker.rollout.seed = 7  # the driver reads the config; the engine was built with the recipe's 1
    wg, engine = trainer.actor_rollout_ref_wg, trainer.engine
    assert wg.rollout.sampling_params.seed == 1
    seeds_of_call = {}

    for step in (3, 4):
        trainer.global_step = step
        engine.calls.clear()
        trainer._make_batch_data({})
        seeds_of_call[step] = {call["sampling"].seed for call in engine.calls if call["sampling"].temperature > 0}
    # the coarse pass is each step's first (and here only) sampled generation; the zoom pass is greedy
    assert seeds_of_call == {3: {3007}, 4: {4007}}
    assert trainer.actor_rollout_ref_wg is wg, "the real worker group is back after the step"
    assert wg.rollout.sampling_params.seed == 1, "EasyR1's own sampling params are untouched between steps"


def test_a_steps_later_generations_take_the_next_seeds():
    """Online filtering generates more than once per step: the k-th generation of step 2 (seed 5) gets 2005 + k."""
    from types import SimpleNamespace

    from zoomzero_plugin.hosts.easyr1.sampling_seed import stepped

    seen = []

    class Group:
        def generate_sequences(self, prompts):
            seen.append(prompts.meta_info.get("seed"))
            return SimpleNamespace(meta_info=prompts.meta_info)

    group = Group()
    trainer = SimpleNamespace(
        global_step=2,
        actor_rollout_ref_wg=group,
        config=SimpleNamespace(worker=SimpleNamespace(rollout=SimpleNamespace(seed=5))),
    )
    with stepped(trainer):
        outputs = [
            trainer.actor_rollout_ref_wg.generate_sequences(SimpleNamespace(meta_info={"n": 2})) for _ in range(3)
        ]
    assert seen == [2005, 2006, 2007]
    assert [o.meta_info for o in outputs] == [{"n": 2}] * 3, "the seed does not leak into the step's batch"
    assert trainer.actor_rollout_ref_wg is group
    trainer.config.worker.rollout.seed = None  # a recipe without a seed: EasyR1's sampling as it was
    with stepped(trainer):
        trainer.actor_rollout_ref_wg.generate_sequences(SimpleNamespace(meta_info={}))
    assert seen[-1] is None
