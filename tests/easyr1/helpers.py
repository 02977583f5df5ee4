"""Builders of EasyR1 objects the tests share."""

import json

import torch


def model_with_sizes(model_dir, dest, config_file, shortest_edge, longest_edge):
    """A copy of the model folder ``model_dir`` in ``dest`` whose processor file ``config_file`` bounds its pixels to
    ``shortest_edge``..``longest_edge``; returns ``dest``."""
    import shutil

    shutil.copytree(model_dir, dest, dirs_exist_ok=True)
    config = json.loads((dest / config_file).read_text())
    config["size"] = {"shortest_edge": shortest_edge, "longest_edge": longest_edge}
    (dest / config_file).write_text(json.dumps(config))
    return dest


def padded_responses(tokenizer, texts, extra=3):
    """(responses, response_mask): each text's ids + EOS, right-padded as EasyR1's rollout leaves them."""
    ids = [tokenizer.encode(t, add_special_tokens=False) + [tokenizer.eos_token_id] for t in texts]
    width = max(len(x) for x in ids) + extra
    responses = torch.full((len(ids), width), tokenizer.pad_token_id)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, x in enumerate(ids):
        responses[i, : len(x)], mask[i, : len(x)] = torch.tensor(x), 1
    return responses, mask


def rlhf_dataset(config, tokenizer, processor, **overrides):
    """EasyR1's RLHFDataset over ``data.train_files`` as create_dataloader builds it (no overlong filtering)."""
    from verl.utils.dataset import RLHFDataset

    data = config.data
    kwargs = dict(
        data_path=data.train_files,
        tokenizer=tokenizer,
        processor=processor,
        prompt_key=data.prompt_key,
        answer_key=data.answer_key,
        video_key=data.video_key,
        video_fps=data.video_fps,
        max_prompt_length=data.max_prompt_length,
        truncation="right",
        min_pixels=data.min_pixels,
        max_pixels=data.max_pixels,
        filter_overlong_prompts=False,
    )
    return RLHFDataset(**{**kwargs, **overrides})


def reward_manager_class():
    """EasyR1's batch reward manager: BatchFunctionRewardManager (0.3.2) or AutoRewardManager (main)."""
    import verl.workers.reward as reward

    return getattr(reward, "AutoRewardManager", None) or reward.BatchFunctionRewardManager


def reward_manager_actor(config, tokenizer):
    """EasyR1's reward manager as its Runner creates it: a Ray actor."""
    import ray

    return ray.remote(reward_manager_class()).options(num_cpus=0).remote(config.worker.reward, tokenizer)


def evidence_rows(root, questions, duration):
    """(rows.jsonl path, rows): per ``(question, options, letter)`` a 112x84 video at 4 fps of ``duration`` s whose
    answer's colour shows from 5 to 8 s, and its row (question text, video, answer JSON)."""
    from zoomzero_plugin.agent import question_text
    from zoomzero_plugin.ground_truth import GroundTruth
    from zoomzero_plugin.synthetic.videos import Evidence, write_video

    out = []
    for i, (question, options, letter) in enumerate(questions):
        video = write_video(
            root / f"v{i}.mp4",
            duration=duration,
            fps=4,
            width=112,
            height=84,
            evidence=[Evidence(5.0, 8.0, options[ord(letter) - 65])],
        )
        truth = GroundTruth(letter, options, ((5.0, 8.0),), duration, f"q{i}", question)
        out.append({"prompt": question_text(question, options), "videos": [str(video)], "answer": truth.to_json()})
    path = root / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path, out
