"""TokenAdv over turns on a hand-computed group, through EasyR1's compute_advantage; and the agent's options."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from zoomzero_plugin.hosts.easyr1.batch_step import COMPONENT_PREFIX
from zoomzero_plugin.hosts.easyr1.zoomzero.tokenadv import GLUE_MASK, prepare
from zoomzero_plugin.hosts.options import AgentOptions, TokenAdvOptions
from zoomzero_plugin.sections import SectionError

CALL = '<think>a</think><video_zoom>{"segment": [1, 3], "fps": 2}</video_zoom>'
OBS = "<|im_end|><|im_start|>user\nframes. Do not call <video_zoom> in this round.<|im_end|>\n<|im_start|>assistant\n"
# Each response: (text, sampled?) pieces. Response 1 answers at once; 0 and 2 call, see a clip, answer.
RESPONSES = [
    [(CALL, True), (OBS, False), ("<think>b</think><answer>A</answer><|im_end|>", True)],
    [("<think>c</think><answer>B</answer><|im_end|>", True)],
    [(CALL, True), (OBS, False), ("<think>d</think><answer>A</answer><|im_end|>", True)],
]
COMPONENTS = {
    "accuracy": [1.0, 0.0, 1.0],
    "format": [1.0, 1.0, 0.0],
    "grounding": [0.5, 0.0, 0.25],
    "tool": [1.0, 0.0, 0.0],
}


def multiturn_batch(tokenizer, responses=RESPONSES):
    from verl.protocol import DataProto

    rows, masks = [], []
    for pieces in responses:
        ids, mask = [], []
        for text, sampled in pieces:
            piece = tokenizer.encode(text, add_special_tokens=False)
            ids += piece
            mask += [int(sampled)] * len(piece)
        rows.append(ids)
        masks.append(mask)
    width = max(map(len, rows)) + 2
    n = len(rows)
    ids_out = torch.full((n, width), tokenizer.pad_token_id)
    response_mask = torch.zeros((n, width), dtype=torch.long)
    for i, (ids, mask) in enumerate(zip(rows, masks)):
        ids_out[i, : len(ids)], response_mask[i, : len(mask)] = torch.tensor(ids), torch.tensor(mask)
    tensors = {"responses": ids_out, "response_mask": response_mask, "token_level_rewards": torch.zeros(n, width)}
    tensors.update({COMPONENT_PREFIX + k: torch.tensor(v[:n]) for k, v in COMPONENTS.items()})
    return DataProto.from_dict(tensors=tensors, non_tensors={"uid": np.array(["p"] * n, dtype=object)})


def over_turns_trainer(tokenizer):
    reward = SimpleNamespace(reward_function=None, reward_function_kwargs={"tokenadv": {"over_turns": True}})
    config = SimpleNamespace(worker=SimpleNamespace(reward=reward))
    return SimpleNamespace(config=config, tokenizer=tokenizer)


def test_calls_learn_from_format_and_grounding_the_rest_from_format_and_accuracy(easyr1_tokenizer):
    from verl.trainer import ray_trainer

    data = multiturn_batch(easyr1_tokenizer)
    prepare(over_turns_trainer(easyr1_tokenizer), data)
    calls, mask = data.batch[GLUE_MASK], data.batch["response_mask"].bool()
    decoded = [easyr1_tokenizer.decode(data.batch["responses"][i][calls[i]].tolist()) for i in range(3)]
    call = CALL[CALL.index("<video_zoom>") :]
    # tokens overlapping the call's characters (a token may straddle the tag: here "><")
    assert [d.endswith(call) and len(d) <= len(call) + 2 for d in decoded] == [True, False, True]
    assert decoded[1] == "" and "Do not call" not in decoded[0] + decoded[2], (
        "an observation's '<video_zoom>' is no call"
    )
    adv = ray_trainer.compute_advantage(data, adv_estimator="tokenadv", gamma=1.0, lam=1.0).batch["advantages"]
    # Population std per component over the group (Eq. 4):
    #   accuracy [1, 0, 1] and format [1, 1, 0]: mean 2/3, std sqrt(2)/3 -> A = ±1/sqrt(2), ∓sqrt(2)
    #   grounding [0.5, 0, 0.25]: mean 1/4, std sqrt(1/24) -> A = [sqrt(6)/2, -sqrt(6)/2, 0]
    h, r, g = 1 / math.sqrt(2), math.sqrt(2), math.sqrt(6) / 2
    expected_calls = {0: (h + g) / 2, 2: (-r + 0) / 2}  # mean(A_format, A_grounding)
    expected_rest = {0: (h + h) / 2, 1: (h - r) / 2, 2: (-r + h) / 2}  # mean(A_format, A_accuracy)
    for i, value in expected_calls.items():
        assert adv[i][calls[i]].tolist() == pytest.approx([value] * int(calls[i].sum()), abs=1e-5)
    for i, value in expected_rest.items():
        rest = mask[i] & ~calls[i]
        assert adv[i][rest].tolist() == pytest.approx([value] * int(rest.sum()), abs=1e-5)
    assert (adv[~mask] == 0).all(), "observation tokens and padding get nothing"


def test_a_turn_is_read_as_the_protocol_reads_it(easyr1_tokenizer):
    """A turn that leaves ``<video_zoom>`` open and then answers is an answer turn (the rollout scores its answer and
    runs no call): none of its tokens learn from the grounding rewards. A turn cut inside its call (no answer) is a
    call that ran out of tokens: its call tokens do. The share logged is over the sampled tokens."""
    answered = "<think>a</think>look<video_zoom>seen</think><answer>C</answer><|im_end|>"
    cut = '<think>a</think><video_zoom>{"segment": [1, 3], "fps'
    data = multiturn_batch(easyr1_tokenizer, [[(answered, True)], [(cut, True)]])
    share = prepare(over_turns_trainer(easyr1_tokenizer), data)["tokenadv/grounding_token_share"]
    calls = data.batch[GLUE_MASK]
    assert not calls[0].any(), "an answer turn's open <video_zoom> is no call"
    assert easyr1_tokenizer.decode(data.batch["responses"][1][calls[1]].tolist()).endswith(cut[cut.index("<video") :])
    assert share == pytest.approx(float(calls[1].sum()) / float(data.batch["response_mask"].sum()))
    assert 0 < share < 1


def test_over_turns_changes_the_default_groups_only():
    turns = TokenAdvOptions.from_section({"over_turns": True})
    assert (turns.glue_components, turns.answer_components) == (("format", "grounding"), ("format", "accuracy"))
    mine = TokenAdvOptions.from_section({"over_turns": True, "glue_components": ["grounding"]})
    assert mine.glue_components == ("grounding",) and mine.answer_components == ("format", "accuracy")
    plain = TokenAdvOptions.from_section({})
    assert not plain.over_turns and plain.glue_components == ("format", "zoom", "iou")


def test_agent_options_take_the_budget_fields_and_refuse_the_rest():
    section = {"max_assistant_turns": 3, "max_frames_per_call": 8, "prompt": "eval"}
    options = AgentOptions.from_section(section)
    budget = options.budget
    assert options.enable and budget.max_assistant_turns == 3 and budget.max_frames_per_call == 8
    assert options.prompt == "eval"
    assert AgentOptions.from_section(options.to_section()) == options
    assert not AgentOptions.from_section(None).enable
    assert not AgentOptions.from_section({"enable": False}).enable
    with pytest.raises(SectionError, match=r"unknown option\(s\) \['turns'\].*'max_frames_per_call'"):
        AgentOptions.from_section({"turns": 3})
    with pytest.raises(SectionError, match="agent: invalid agent budget: max_assistant_turns must be an integer >= 1"):
        AgentOptions.from_section({"max_assistant_turns": 0})
    with pytest.raises(SectionError, match="agent.max_assistant_turns: 2.5 is not a valid int"):
        AgentOptions.from_section({"max_assistant_turns": 2.5})
    with pytest.raises(SectionError, match="prompt must be one of"):
        AgentOptions.from_section({"prompt": "mine"})
    with pytest.raises(SectionError, match=r"unknown option\(s\) \['budget'\]"):
        AgentOptions.from_section({"budget": {"max_assistant_turns": 2}})
    # every problem of a section at once, one line each: an unknown key and each value of the wrong type
    with pytest.raises(SectionError) as caught:
        AgentOptions.from_section({"turns": 3, "max_calls": "two", "schedule": 1.5, "prompt": "eval"})
    kwargs = "worker.reward.reward_function_kwargs.agent"
    assert caught.value.problems[0].startswith(f"{kwargs}: unknown option(s) ['turns']; known: ['clip_as', 'enable',")
    assert caught.value.problems[1:] == [f"{kwargs}.max_calls: 'two' is not a valid int"]
