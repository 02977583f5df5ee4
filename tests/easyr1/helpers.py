"""Builders of EasyR1 objects the tests share."""

import torch


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
        data_path=data.train_files, tokenizer=tokenizer, processor=processor, prompt_key=data.prompt_key,
        answer_key=data.answer_key, video_key=data.video_key, video_fps=data.video_fps,
        max_prompt_length=data.max_prompt_length, truncation="right", min_pixels=data.min_pixels,
        max_pixels=data.max_pixels, filter_overlong_prompts=False,
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
