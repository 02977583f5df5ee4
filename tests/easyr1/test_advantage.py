"""tokenadv through EasyR1's own trainer code: the enum check, the config checks, compute_advantage."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from zoomzero_plugin.gvqa.advantages import token_adv
from zoomzero_plugin.hosts.easyr1.batch_step import COMPONENT_PREFIX
from zoomzero_plugin.hosts.easyr1.errors import ConfigError
from zoomzero_plugin.hosts.easyr1.zoomzero.tokenadv import GLUE_MASK, prepare

from .helpers import padded_responses

TEXTS = [
    "<think>a</think><answer>B</answer><glue>[(3.0, 5.0)]</glue>",
    "<think>bb</think><answer>C</answer><glue>[(0.0, 1.0)]</glue>",
    "<think>c</think><answer>B</answer>",
    "<think>dd</think><answer>A</answer><glue>[(6.0, 9.5)]</glue>",
]
COMPONENTS = {
    "format": [1.0, 1.0, 0.0, 1.0],
    "iou": [1.0, 0.0, 0.0, 0.3],
    "accuracy": [1.0, 1.0, 1.0, 0.0],
    "zoom": [1.0, 0.0, 0.0, 0.0],
}


def generated_batch(tokenizer, uids=("p", "p", "q", "q")):
    """A DataProto as the host leaves it after a training batch's rewards: responses, mask, uids, components."""
    from verl.protocol import DataProto

    responses, mask = padded_responses(tokenizer, TEXTS, extra=4)
    n, width = responses.shape
    tensors = {"responses": responses, "response_mask": mask}
    tensors.update({COMPONENT_PREFIX + k: torch.tensor(v) for k, v in COMPONENTS.items()})
    scores = torch.zeros(n, width)
    scores[torch.arange(n), mask.sum(-1) - 1] = torch.tensor([0.9, 0.1, 0.5, 0.4])
    tensors["token_level_rewards"] = scores
    return DataProto.from_dict(tensors=tensors, non_tensors={"uid": np.array(uids, dtype=object)})


def test_patched_compute_advantage_gives_tokenadv(ppo_config, easyr1_tokenizer):
    from verl.trainer import ray_trainer

    data = generated_batch(easyr1_tokenizer)
    prepare(SimpleNamespace(config=ppo_config, tokenizer=easyr1_tokenizer), data)
    glue = data.batch[GLUE_MASK]
    for i, text in enumerate(TEXTS):
        assert bool(glue[i].any()) == ("<glue>" in text)
    data = ray_trainer.compute_advantage(data, adv_estimator="tokenadv", gamma=1.0, lam=1.0)
    expected, _ = token_adv(
        {k: torch.tensor(v) for k, v in COMPONENTS.items()},
        glue,
        data.batch["response_mask"],
        data.non_tensor_batch["uid"],
    )
    assert torch.equal(data.batch["advantages"], expected) and torch.equal(data.batch["returns"], expected)
    # group p differs in iou and zoom, not accuracy: glue tokens 2/3, the other tokens 1/3 (Eq. 5)
    adv, valid = data.batch["advantages"][0], data.batch["response_mask"][0].bool()
    assert adv[glue[0]].unique().tolist() == pytest.approx([2 / 3], abs=1e-4)
    assert adv[valid & ~glue[0]].unique().tolist() == pytest.approx([1 / 3], abs=1e-4)


@pytest.mark.parametrize("estimator", ["grpo", "rloo", "reinforce_plus_plus"])
def test_easyr1_estimators_give_easyr1s_own_numbers(easyr1_tokenizer, estimator):
    from verl.trainer import ray_trainer

    patched = ray_trainer.compute_advantage(generated_batch(easyr1_tokenizer), adv_estimator=estimator)
    original = ray_trainer.compute_advantage.__wrapped__(generated_batch(easyr1_tokenizer), adv_estimator=estimator)
    assert ray_trainer.compute_advantage is not ray_trainer.compute_advantage.__wrapped__
    assert torch.equal(patched.batch["advantages"], original.batch["advantages"])
    assert torch.equal(patched.batch["returns"], original.batch["returns"])
    assert "glue_mask" not in patched.batch


def test_tokenadv_without_the_hosts_batch_inputs_stops(easyr1_tokenizer):
    from verl.trainer import ray_trainer

    data = generated_batch(easyr1_tokenizer)  # components present, but no glue mask: the batch seam never ran
    with pytest.raises(RuntimeError, match="glue mask"):
        ray_trainer.compute_advantage(data, adv_estimator="tokenadv")


def make_trainer(config):
    from verl.trainer.ray_trainer import RayPPOTrainer

    return RayPPOTrainer(
        config=config,
        tokenizer=None,
        processor=None,
        train_dataloader=[None],
        val_dataloader=[None],
        role_worker_mapping={},
        resource_pool_manager=None,
    )


def test_trainer_accepts_tokenadv_as_a_group_estimator(ppo_config):
    trainer = make_trainer(ppo_config)
    assert trainer.config.algorithm.adv_estimator == "tokenadv", "fit() must pass tokenadv on, not grpo"
    assert trainer.use_critic is False and trainer.training_steps == 1


def test_without_the_host_easyr1_rejects_tokenadv_rather_than_training_grpo(ppo_config):
    from verl.trainer.ray_trainer import RayPPOTrainer

    with pytest.raises(NotImplementedError, match="tokenadv"):
        RayPPOTrainer.__init__.__wrapped__(
            object.__new__(RayPPOTrainer), ppo_config, None, None, [None], [None], {}, None
        )


@pytest.mark.parametrize(
    "change, message",
    [
        ({"worker.rollout.n": 1}, "worker.rollout.n must be >= 2"),
        ({"algorithm.use_kl_loss": False}, "KL penalty"),
        ({"worker.reward.reward_function_kwargs.components": ["iou"]}, "no enabled reward component drives the answer"),
        ({"worker.reward.reward_function_kwargs.components": ["format", "iou", "accuracy"]}, "'zoom' is not in"),
        ({"worker.reward.reward_function_kwargs.zoom.max_visual_tokens": 4096}, "do not fit the rollout context"),
        (
            {"worker.reward.reward_function_kwargs.zoom.no_spans": "blank"},
            "no_spans must be one of ['skip', 'uniform']",
        ),
        ({"worker.reward.reward_function_kwargs.zoom.fsp": 2}, "unknown option(s) ['fsp']"),
        ({"worker.reward.reward_function_kwargs.tokenadv.eps": 0}, "eps must be > 0"),
        (
            {"worker.reward.reward_function_kwargs.tokenadv.std": "unbiased"},
            "std must be one of ['population', 'sample']",
        ),
        (
            {"worker.reward.reward_function_kwargs.zoom.prompt": "fancy"},
            "zoom.prompt must be one of ['paper', 'concise']",
        ),
        ({"worker.reward.reward_function_kwargs.bonus": 1}, "not parameters of gvqa_reward.py:compute_score"),
        ({"worker.reward.reward_type": "sequential"}, "'batch'"),
        ({"algorithm.adv_estimator": "tokenad"}, "'tokenad' is unknown"),
    ],
)
def test_trainer_stops_on_unusable_settings(recipe_path, change, message):
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    overrides = [f"{k}={v}" for k, v in change.items()]
    with pytest.raises(ConfigError) as info:  # EasyR1 main: load_recipe itself rejects reward_type=sequential
        make_trainer(load_recipe(recipe_path, overrides).config)
    assert message in str(info.value)


def test_grpo_sum_is_group_normalised_summed_reward_with_tokenadvs_std(ppo_config, easyr1_tokenizer):
    from verl.trainer import ray_trainer

    from zoomzero_plugin.hosts.easyr1.zoomzero.tokenadv import prepare_grpo_sum

    # summed rewards per response (token_level_rewards): group p = (0.9, 0.1), group q = (0.5, 0.4)
    data = generated_batch(easyr1_tokenizer)
    prepare_grpo_sum(SimpleNamespace(config=ppo_config), data)
    data = ray_trainer.compute_advantage(data, adv_estimator="grpo_sum", gamma=1.0, lam=1.0)
    mask = data.batch["response_mask"].bool()
    # population std of two values a, b is |a - b| / 2, so each gets ±1 (minus eps): (0.9-0.5)/(0.4+1e-6)
    per_response = [data.batch["advantages"][i][mask[i]].unique().tolist() for i in range(4)]
    for got, expected in zip(per_response, [1.0, -1.0, 1.0, -1.0]):
        assert got == pytest.approx([expected], abs=1e-4)
    assert torch.equal(data.batch["advantages"][~mask], torch.zeros(int((~mask).sum())))
    # with std: sample, as EasyR1's grpo: |a - b| / sqrt(2) -> ±1/sqrt(2); exactly EasyR1's own numbers
    ppo_config.worker.reward.reward_function_kwargs["tokenadv"]["std"] = "sample"
    sample = generated_batch(easyr1_tokenizer)
    prepare_grpo_sum(SimpleNamespace(config=ppo_config), sample)
    sample = ray_trainer.compute_advantage(sample, adv_estimator="grpo_sum")
    easyr1 = ray_trainer.compute_advantage(generated_batch(easyr1_tokenizer), adv_estimator="grpo")
    assert torch.allclose(sample.batch["advantages"], easyr1.batch["advantages"], atol=1e-6)
    assert sample.batch["advantages"][0][mask[0]].unique().tolist() == pytest.approx([2**-0.5], abs=1e-4)


def test_tokenadv_std_option_reaches_the_advantage(ppo_config, easyr1_tokenizer):
    from verl.trainer import ray_trainer

    results = {}
    for std in ("population", "sample"):
        ppo_config.worker.reward.reward_function_kwargs["tokenadv"]["std"] = std
        data = generated_batch(easyr1_tokenizer)
        prepare(SimpleNamespace(config=ppo_config, tokenizer=easyr1_tokenizer), data)
        results[std] = ray_trainer.compute_advantage(data, adv_estimator="tokenadv").batch["advantages"]
    # groups of two: the sample std is sqrt(2) times the population std, so advantages shrink by 1/sqrt(2)
    assert torch.allclose(results["sample"], results["population"] / 2**0.5, atol=1e-5)
