"""EasyR1's own reward manager runs ``zoomzero:videozoomer`` by plugin name on multi-turn response strings."""

import numpy as np
import pytest

from zoomzero_plugin.agent import AgentBudget, Trajectory, VideoInfo
from zoomzero_plugin.ground_truth import GroundTruth

from ..helpers import played
from .helpers import padded_responses, reward_manager_class

TRUTH = GroundTruth(answer="B", options=("red", "green", "blue"), spans=(), duration=100.0, qid="q1", question="?")
CALL = '<think>look</think><video_zoom>{"segment": [10, 12], "fps": 2}</video_zoom>'
ANSWER = "<think>red</think><answer>B</answer>"


def trajectory(turns):
    return played(Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget()), turns)


@pytest.mark.parametrize("skip_special_tokens", [True, False])
def test_reward_manager_scores_whole_trajectories(ppo_config, easyr1_tokenizer, skip_special_tokens):
    from verl.protocol import DataProto
    from verl.workers.reward.config import RewardConfig

    config = RewardConfig(
        reward_function="zoomzero:videozoomer",
        reward_function_kwargs={"weights": {"tool": 0.5}},
        skip_special_tokens=skip_special_tokens,
        num_cpus=0,
    )
    config.post_init()  # the plugin seam resolves the name to the installed file
    assert config.reward_function.endswith("videozoomer_reward.py") and config.reward_function_name == "compute_score"
    texts = [trajectory([CALL, ANSWER]), trajectory([ANSWER]), trajectory([CALL, ANSWER.replace("B", "C")])]
    responses, mask = padded_responses(easyr1_tokenizer, [t.removesuffix("<|im_end|>") for t in texts])
    truths = np.array([TRUTH.to_json()] * len(texts), dtype=object)
    data = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": mask}, non_tensors={"ground_truth": truths}
    )
    reward_tensor, metrics = reward_manager_class()(config, easyr1_tokenizer).compute_reward(data)
    assert metrics["accuracy"] == [1.0, 1.0, 0.0] and metrics["format"] == [1.0, 1.0, 1.0]
    assert metrics["tool"] == [1.0, 0.0, 0.0] and metrics["calls"] == [1.0, 0.0, 1.0]
    assert reward_tensor.sum(-1).tolist() == pytest.approx([1.5, 1.0, 0.1])
    last = int(mask[0].sum()) - 1
    assert reward_tensor[0, last] == pytest.approx(1.5) and reward_tensor[0, :last].abs().sum() == 0


def test_dry_run_refuses_the_ground_truths_the_reward_refuses():
    """The rollout's row check reads a row's answer as the reward does: a bare A–Z letter or the answer JSON.
    A non-ASCII letter passes str.isalpha() but the reward raises on it, so the dry run must report it."""
    from types import SimpleNamespace

    from zoomzero_plugin.agent.videozoomer_reward import compute_score
    from zoomzero_plugin.hosts.easyr1.zoomzero.checks import agent_row_problems
    from zoomzero_plugin.hosts.options import AgentOptions

    data = SimpleNamespace(
        video_key="videos", prompt_key="prompt", answer_key="answer", image_dir=None, max_prompt_length=2048
    )
    model = SimpleNamespace(model_path="/no/such/model")
    config = SimpleNamespace(data=data, worker=SimpleNamespace(actor=SimpleNamespace(model=model)))
    rows = [{"videos": ["v.mp4"], "prompt": "<video>?", "answer": answer} for answer in ("b", "é", TRUTH.to_json())]
    problems = agent_row_problems(config, rows, "train", AgentOptions.from_section({}))
    assert len(problems) == 1 and problems[0].startswith("train row 1: data.answer_key 'answer' holds no answer letter")
    assert compute_score([{"response": ANSWER, "ground_truth": "b"}])[0]["accuracy"] == 1.0
    with pytest.raises(ValueError, match="reward input 0: unusable ground truth"):
        compute_score([{"response": ANSWER, "ground_truth": "é"}])
