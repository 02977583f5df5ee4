"""EasyR1's RLHFDataset reads this package's rows; EasyR1's reward managers run gvqa_reward.py by plugin name."""

import json

import numpy as np
import pytest

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.hosts.easyr1.reward_extras import DELIVERED, add_reward_extras
from zoomzero_plugin.hosts.easyr1.reward_names import FIXUP_ENV, apply_fixup
from zoomzero_plugin.hosts.easyr1.zoomzero.options import reward_targets
from zoomzero_plugin.hosts.options import GVQA
from zoomzero_plugin.rows import read_rows

from .helpers import padded_responses, reward_manager_class, rlhf_dataset


def test_rlhf_dataset_loads_benchmark_rows_with_their_videos(
    ppo_config, easyr1_tokenizer, easyr1_processor, benchmark_rows
):
    rows = read_rows(benchmark_rows)
    dataset = rlhf_dataset(ppo_config, easyr1_tokenizer, easyr1_processor)
    assert len(dataset) == len(rows) == 2
    item = dataset[0]
    assert item["multi_modal_data"] == {"videos": rows[0]["videos"]}
    assert GroundTruth.parse(item["ground_truth"]) == GroundTruth.parse(rows[0]["answer"])
    video_pad = easyr1_tokenizer.convert_tokens_to_ids("<|video_pad|>")
    assert item["raw_prompt_ids"].count(video_pad) == 1  # vLLM expands the placeholder itself
    n_video_tokens = int((item["input_ids"] == video_pad).sum())
    assert n_video_tokens == 12 // 2 * (112 // 28) * (84 // 28)  # 12 frames at <= 12544 px: 112x84
    assert item["position_ids"].shape == (4, ppo_config.data.max_prompt_length)  # text + 3-D mrope rows
    assert int(item["attention_mask"].sum()) < ppo_config.data.max_prompt_length


def test_default_min_pixels_silently_drops_small_videos(ppo_config, easyr1_tokenizer, easyr1_processor):
    """The trap `easyr1 train --dry-run` reports: EasyR1's default min_pixels upsizes frames past the prompt."""
    dataset = rlhf_dataset(
        ppo_config,
        easyr1_tokenizer,
        easyr1_processor,
        min_pixels=262144,
        max_pixels=4194304,
        max_prompt_length=1024,
        filter_overlong_prompts=True,
        filter_overlong_prompts_workers=None,
    )
    assert len(dataset) == 0


def reward_data(tokenizer, texts, truth, extras=None):
    """A DataProto shaped like EasyR1's batch after generation: right-padded responses, mask, ground truth."""
    from verl.protocol import DataProto

    responses, mask = padded_responses(tokenizer, texts)
    truths = np.array([truth.to_json()] * len(texts), dtype=object)
    data = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": mask}, non_tensors={"ground_truth": truths}
    )
    if extras:
        add_reward_extras(data, **extras)
    return data


TRUTH = GroundTruth(
    answer="B", options=("red", "green", "blue"), spans=((3.0, 5.0),), duration=12.0, qid="q1", question="Colour?"
)
GOOD = "<think>ok</think><answer>B</answer><glue>[(3.0, 5.0)]</glue>"
HALF = "<think>ok</think><answer>C</answer><glue>[(3.0, 4.0)]</glue>"


def manager(config, tokenizer):
    return reward_manager_class()(config.worker.reward, tokenizer)


def test_reward_manager_runs_gvqa_by_plugin_name_with_zoom_answers(ppo_config, easyr1_tokenizer):
    assert (
        f"{ppo_config.worker.reward.reward_function}:{ppo_config.worker.reward.reward_function_name}"
        == reward_targets()[GVQA]
    )
    data = reward_data(easyr1_tokenizer, [GOOD, HALF, "junk"], TRUTH, {"zoom_answer": ["B", "B", None]})
    reward_tensor, metrics = manager(ppo_config, easyr1_tokenizer).compute_reward(data)
    assert metrics.pop(DELIVERED) == [1.0]
    assert metrics["zoom"] == [1.0, 1.0, 0.0] and metrics["accuracy"] == [1.0, 0.0, 0.0]
    assert metrics["iou"] == pytest.approx([1.0, 0.5, 0.0]) and metrics["format"] == [1.0, 1.0, 0.0]
    lengths = data.batch["response_mask"].sum(-1)
    assert reward_tensor.sum(-1).tolist() == pytest.approx([1.0, 0.625, 0.0])
    assert reward_tensor[0, int(lengths[0]) - 1] == 1.0 and reward_tensor[0, : int(lengths[0]) - 1].abs().sum() == 0


def test_zoom_enabled_without_the_hook_stops_instead_of_scoring_zero(ppo_config, easyr1_tokenizer):
    data = reward_data(easyr1_tokenizer, [GOOD], TRUTH)  # no reward extras: the rollout hook did not run
    with pytest.raises(RuntimeError, match="zoom rollout hook did not run"):
        manager(ppo_config, easyr1_tokenizer).compute_reward(data)


def test_plugin_options_are_not_passed_to_reward_functions_that_do_not_take_them(
    ppo_config, easyr1_tokenizer, tmp_path
):
    path = tmp_path / "plain_reward.py"
    path.write_text(
        "REWARD_TYPE = 'batch'\n"
        "def compute_score(reward_inputs, bonus=0.0):\n"
        "    return [{'overall': bonus + float('B' in x['response']), 'seen': float('zoom_answer' in x)} for x in "
        "reward_inputs]\n"
    )
    reward = ppo_config.worker.reward
    reward.reward_function, reward.reward_function_name = str(path), "compute_score"
    reward.reward_function_kwargs = {"bonus": 0.5, "zoom": {"enable": True}, "tokenadv": {"eps": 1e-6}}
    data = reward_data(easyr1_tokenizer, [GOOD, "A"], TRUTH, {"zoom_answer": ["B", None]})
    reward_tensor, metrics = manager(ppo_config, easyr1_tokenizer).compute_reward(data)
    assert reward_tensor.sum(-1).tolist() == [1.5, 0.5] and metrics["seen"] == [1.0, 1.0]


def test_sequential_reward_functions_get_the_extras_of_their_own_response(ppo_config, easyr1_tokenizer, tmp_path):
    path = tmp_path / "seq_reward.py"
    path.write_text(
        "REWARD_TYPE = 'sequential'\ndef score(x):\n    return {'overall': float(x.get('zoom_answer') == 'B')}\n"
    )
    reward = ppo_config.worker.reward
    reward.reward_function, reward.reward_function_name, reward.reward_function_kwargs = str(path), "score", {}
    if hasattr(reward, "reward_type"):  # EasyR1 0.3.2 picks the manager class by config
        from verl.workers.reward import SequentialFunctionRewardManager as Manager

        reward.reward_type = "sequential"
    else:  # EasyR1 main: one manager reading REWARD_TYPE
        from verl.workers.reward import AutoRewardManager as Manager
    data = reward_data(easyr1_tokenizer, ["x", "y", "z"], TRUTH, {"zoom_answer": ["A", "B", None]})
    reward_tensor, _ = Manager(reward, easyr1_tokenizer).compute_reward(data)
    assert reward_tensor.sum(-1).tolist() == [0.0, 1.0, 0.0]


def test_a_reward_name_dropped_by_a_plain_driver_is_restored_in_workers(monkeypatch):
    """`python3 -m verl.trainer.main`: the driver builds the config before Ray (and the plugins) start."""
    from verl.workers.reward.config import RewardConfig

    config = RewardConfig(reward_function=GVQA)
    RewardConfig.post_init.__wrapped__(config)  # EasyR1's own post_init, as in a driver without plugins
    assert config.reward_function is None and config.reward_function_name == "gvqa"
    apply_fixup(config)
    assert config.reward_function is None, "nothing to restore without the driver's note"
    monkeypatch.setenv(FIXUP_ENV, GVQA)
    apply_fixup(config)
    assert f"{config.reward_function}:{config.reward_function_name}" == reward_targets()[GVQA]
    other = RewardConfig(reward_function="./missing.py:score")
    RewardConfig.post_init.__wrapped__(other)
    apply_fixup(other)
    assert other.reward_function is None, "a different missing reward is never replaced by the plugin's"


def test_reward_extras_refuse_to_replace_easyr1_inputs(easyr1_tokenizer):
    data = reward_data(easyr1_tokenizer, [GOOD], TRUTH)
    with pytest.raises(ValueError, match="ground_truth"):
        add_reward_extras(data, ground_truth=["x"])
    with pytest.raises(ValueError, match="2 values for 1"):
        add_reward_extras(data, zoom_answer=["A", "B"])
    add_reward_extras(data, zoom_answer=["B"])
    add_reward_extras(data, valid_tool_calls=[2])
    assert data.non_tensor_batch["reward_extras"][0] == {"zoom_answer": "B", "valid_tool_calls": 2}
    json.dumps(list(data.non_tensor_batch["reward_extras"]))  # plain data: travels through Ray
