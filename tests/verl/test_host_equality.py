"""The same responses through both hosts: equal rewards and equal TokenAdv advantages.

EasyR1's side is what the EasyR1 host runs (its reward files ``zoomzero:gvqa`` and ``zoomzero:videozoomer`` as EasyR1's
reward manager calls them: each response decoded from its ``sum(response_mask)`` tokens with special tokens skipped;
its TokenAdv ``prepare`` and ``compute``); neither imports EasyR1, so they run here beside verl 0.9. verl's side is
this host's verl reward managers (``run_single`` on a one-trajectory DataProto, as verl's reward loop calls it) and the
registered ``tokenadv`` estimator through verl's own ``compute_advantage``, with the inputs the trainer seam fetches.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from zoomzero_plugin.hosts.options import GVQA as GVQA_REWARD, VIDEOZOOMER as VIDEOZOOMER_REWARD

DURATION = 12.0
TRUTHS = {  # one question per group: the right letter, the evidence (3 s to 5 s)
    "p": '{"answer": "B", "options": ["red", "green", "blue"], "spans": [[3.0, 5.0]], "duration": 12.0, '
    '"qid": "p", "question": "What colour?"}',
    "q": '{"answer": "A", "options": ["red", "green"], "spans": [[6.0, 9.5]], "duration": 12.0, '
    '"qid": "q", "question": "Which one?"}',
}
GVQA = [  # (uid, response, the zoom pass's letter)
    ("p", "<think>a <time>(3.0, 5.0)</time></think><answer>B</answer><glue>[(3.0, 5.0)]</glue>", "B"),
    ("p", "<think>bb</think><answer>C</answer><glue>[(0.0, 1.0)]</glue>", "C"),
    ("p", "<think>c</think><answer>B</answer>", None),
    ("q", "<think>dd</think><answer>A</answer><glue>[(6.0, 9.5)]</glue>", "A"),
    ("q", "<think>e</think><answer>B</answer><glue>[(6.0, 7.0), (8.0, 9.5)]</glue>", "B"),
]
CALL = '<think>a</think><video_zoom>{"segment": [3, 5], "fps": 2}</video_zoom>'


def clip_observation() -> str:
    """The observation the agent's environment answers CALL with on a 12 s, 4 fps video (4 frames, 3 s to 5 s)."""
    from zoomzero_plugin.agent import Trajectory, VideoInfo
    from zoomzero_plugin.agent.render import IM_END, observation_block, observation_text

    step = Trajectory(VideoInfo("v.mp4", 48, 4.0)).step(CALL)
    return IM_END + observation_block(observation_text(step.observation))


OBS = clip_observation()
AGENT = [  # (uid, pieces (text, sampled?)): two call then answer, one answers at once
    ("p", [(CALL, True), (OBS, False), ("<think>b</think><answer>B</answer><|im_end|>", True)]),
    ("p", [("<think>c</think><answer>A</answer><|im_end|>", True)]),
    ("p", [(CALL, True), (OBS, False), ("<think>d</think><answer>C</answer><|im_end|>", True)]),
]
SECTION = {
    "reward": {"components": ["format", "iou", "accuracy", "zoom"], "weights": {"zoom": 2.0}},
    "zoom": {"enable": True, "prompt": "concise"},
    "tokenadv": {"eps": 1.0e-6, "std": "population"},
}


@pytest.fixture(scope="module")
def tokenizer():
    from zoomzero_plugin.synthetic.tiny_qwen import build_tokenizer

    return build_tokenizer()


def batch_of(tokenizer, rows):
    """(responses, response_mask) right-padded, as both trainers hold them; each row a list of (text, sampled)."""
    ids, masks = [], []
    for pieces in rows:
        row, mask = [], []
        for text, sampled in pieces:
            piece = tokenizer.encode(text, add_special_tokens=False)
            row, mask = row + piece, mask + [int(sampled)] * len(piece)
        ids.append(row)
        masks.append(mask)
    width = max(map(len, ids)) + 3
    responses = torch.full((len(ids), width), tokenizer.pad_token_id)
    response_mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, (row, mask) in enumerate(zip(ids, masks)):
        responses[i, : len(row)], response_mask[i, : len(mask)] = torch.tensor(row), torch.tensor(mask)
    return responses, response_mask


def verl_config(section, manager):
    from omegaconf import OmegaConf

    return OmegaConf.create({"zoomzero": section, "reward": {"reward_manager": {"name": manager}}})


def verl_rewards(manager, tokenizer, responses, response_mask, truths, extras):
    """Each trajectory through the verl reward manager, as verl's reward loop calls it (one-row DataProto)."""
    from verl.protocol import DataProto

    out = []
    for i in range(len(responses)):
        valid = int(response_mask[i].nonzero().max()) + 1  # the trajectory's extent (observations included)
        prompts = torch.tensor([[tokenizer.pad_token_id, 5, 6]])
        attention = torch.cat([torch.tensor([[0, 1, 1]]), (torch.arange(responses.shape[1]) < valid)[None].long()], 1)
        data = DataProto.from_dict(
            tensors={"prompts": prompts, "responses": responses[i : i + 1], "attention_mask": attention},
            non_tensors={
                "reward_model": np.array([{"ground_truth": truths[i]}], dtype=object),
                "tool_extra_fields": np.array([extras[i]], dtype=object),
            },
        )
        out.append(manager.loop.run_until_complete(manager.run_single(data)))  # the loop verl's worker runs it in
    return out


def verl_advantages(config, tokenizer, responses, response_mask, uids, results, estimator="tokenadv"):
    """verl's compute_advantage with the registered estimator, fed as the trainer seam feeds it."""
    import verl.trainer.ppo.core_algos as core_algos
    from omegaconf import OmegaConf
    from verl.protocol import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage

    from zoomzero_plugin.hosts.verl import tokenadv

    tokenadv.register_estimators(core_algos)
    extras = [{"reward_extra_info": r["reward_extra_info"]} for r in results]
    inputs = tokenadv.inputs_for(config, tokenizer, responses, response_mask, extras)
    n = len(uids)
    scores = torch.zeros(responses.shape)
    scores[torch.arange(n), response_mask.cumsum(-1).argmax(-1)] = torch.tensor([r["reward_score"] for r in results])
    data = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": response_mask, "token_level_rewards": scores},
        non_tensors={"uid": np.array(uids, dtype=object)},
    )
    with tokenadv.supplying(inputs):
        done = compute_advantage(data, adv_estimator=estimator, config=OmegaConf.create({}))
    return done.batch["advantages"]


def easyr1_advantages(reward, section, tokenizer, responses, response_mask, uids, scores):
    """The EasyR1 host's TokenAdv: its prepare (the grounding mask) and compute, on its batch layout; the recipe's
    reward function is this plugin's ``reward`` (``zoomzero:gvqa``, ``zoomzero:videozoomer``), the verl ``section``'s
    options laid out as EasyR1's ``reward_function_kwargs`` (the reward's own kwargs beside the sections)."""
    from verl.protocol import DataProto

    from zoomzero_plugin.hosts.easyr1.batch_step import COMPONENT_PREFIX
    from zoomzero_plugin.hosts.easyr1.zoomzero import tokenadv as easyr1_tokenadv
    from zoomzero_plugin.hosts.easyr1.zoomzero.options import reward_targets

    path, function = reward_targets()[reward].rsplit(":", 1)
    kwargs = {**section.get("reward", {}), **{k: v for k, v in section.items() if k != "reward"}}
    recipe_reward = SimpleNamespace(reward_function=path, reward_function_name=function, reward_function_kwargs=kwargs)

    tensors = {"responses": responses, "response_mask": response_mask}
    tensors["token_level_rewards"] = torch.zeros(responses.shape)
    names = [k for k in scores[0] if k != "overall"]
    tensors.update({COMPONENT_PREFIX + k: torch.tensor([s[k] for s in scores], dtype=torch.float32) for k in names})
    data = DataProto.from_dict(tensors=tensors, non_tensors={"uid": np.array(uids, dtype=object)})
    trainer = SimpleNamespace(
        config=SimpleNamespace(worker=SimpleNamespace(reward=recipe_reward)),
        tokenizer=tokenizer,
    )
    easyr1_tokenadv.prepare(trainer, data)
    return easyr1_tokenadv.compute(data)[0]


def easyr1_decoded(tokenizer, responses, response_mask):
    """What EasyR1's reward manager hands a reward function: the first sum(response_mask) tokens, decoded."""
    return [
        tokenizer.decode(responses[i, : int(response_mask[i].sum())].tolist(), skip_special_tokens=True)
        for i in range(len(responses))
    ]


def test_zoomzero_rewards_and_tokenadv_are_the_same_on_both_hosts(tokenizer):
    from zoomzero_plugin.gvqa import gvqa_reward
    from zoomzero_plugin.hosts.verl.reward import GvqaRewardManager

    uids = [u for u, _, _ in GVQA]
    responses, mask = batch_of(tokenizer, [[(t + "<|im_end|>", True)] for _, t, _ in GVQA])
    truths = [TRUTHS[u] for u in uids]
    extras = [{"zoom_answer": z} for _, _, z in GVQA]
    easyr1_inputs = [
        {"response": text, "response_length": int(mask[i].sum()), "ground_truth": truths[i], **extras[i]}
        for i, text in enumerate(easyr1_decoded(tokenizer, responses, mask))
    ]
    easyr1 = gvqa_reward.compute_score(easyr1_inputs, **SECTION["reward"], zoom=SECTION["zoom"])
    config = verl_config(SECTION, "zoomzero")
    verl = verl_rewards(GvqaRewardManager(config, tokenizer), tokenizer, responses, mask, truths, extras)
    assert [r["reward_extra_info"] for r in verl] == easyr1
    assert [r["reward_score"] for r in verl] == [s["overall"] for s in easyr1]
    # response 0, worked out: template kept (format 1), glue = the evidence (iou 1), B right (accuracy 1), the zoom
    # pass said B (zoom 1): overall (1 + 1 + 1 + 2 * 1) / (1 + 1 + 1 + 2) = 1; response 2 has no glue: format 0, iou 0
    assert easyr1[0] == {"format": 1.0, "iou": 1.0, "accuracy": 1.0, "zoom": 1.0, "overall": 1.0}
    assert easyr1[2]["format"] == 0.0 and easyr1[2]["iou"] == 0.0 and easyr1[2]["zoom"] == 0.0
    ours = verl_advantages(config, tokenizer, responses, mask, uids, verl)
    theirs = easyr1_advantages(GVQA_REWARD, SECTION, tokenizer, responses, mask, uids, easyr1)
    assert torch.equal(ours, theirs)
    assert (ours[0][mask[0].bool()] != 0).all() and (ours[:, -1] == 0).all()  # every response token, no padding


def test_videozoomer_rewards_and_tokenadv_over_turns_are_the_same_on_both_hosts(tokenizer):
    from zoomzero_plugin.agent import videozoomer_reward
    from zoomzero_plugin.hosts.verl.reward import VideoZoomerRewardManager

    section = {"reward": {"weights": {"accuracy": 0.9, "format": 0.1, "tool": 0.5}}, "tokenadv": {"over_turns": True}}
    uids = [u for u, _ in AGENT]
    responses, mask = batch_of(tokenizer, [pieces for _, pieces in AGENT])
    truths = [TRUTHS[u] for u in uids]
    # EasyR1's multi-turn reward input: the decoded response over its extent (the host's seam), special tokens skipped
    extent = [int(mask[i].nonzero().max()) + 1 for i in range(len(uids))]
    decoded = [tokenizer.decode(responses[i, :n].tolist(), skip_special_tokens=True) for i, n in enumerate(extent)]
    easyr1 = videozoomer_reward.compute_score(
        [{"response": t, "response_length": n, "ground_truth": g} for t, n, g in zip(decoded, extent, truths)],
        weights=section["reward"]["weights"],
    )
    config = verl_config(section, "videozoomer")
    verl = verl_rewards(VideoZoomerRewardManager(config, tokenizer), tokenizer, responses, mask, truths, [{}] * 3)
    assert [r["reward_extra_info"] for r in verl] == easyr1
    # trajectory 0, worked out: called [3, 5] (the evidence: grounding 1), then answered B (right): accuracy 1,
    # format 1, tool 1; overall 0.9 + 0.1 + 0.5
    assert (easyr1[0]["accuracy"], easyr1[0]["format"], easyr1[0]["tool"], easyr1[0]["grounding"]) == (1, 1, 1, 1)
    assert easyr1[0]["overall"] == pytest.approx(1.5)
    ours = verl_advantages(config, tokenizer, responses, mask, uids, verl)
    theirs = easyr1_advantages(VIDEOZOOMER_REWARD, section, tokenizer, responses, mask, uids, easyr1)
    assert torch.equal(ours, theirs)
    assert (ours[mask == 0] == 0).all()  # observation and padding tokens learn nothing
