"""Qwen3-VL video rows in EasyR1's dataset (seam ``dataset.RLHFDataset.__init__``, :mod:`.dataset_videos`): the
prompt's timestamps and temporal patches are those of the frames the rollout and the actor see.

EasyR1 main hands Qwen3-VL's processor a row's frames without their metadata in ``RLHFDataset.__getitem__``; the
processor then takes the video for 24 fps and samples it again at 2 fps. The rows here: 12-s videos at 4 fps (48
frames), read at ``data.video_fps`` 1.0, i.e. 12 frames spread over the whole video, 6 temporal patches of 2.
"""

import copy
import pickle
import re

import numpy as np
import pytest
import torch

from zoomzero_plugin.hosts.easyr1 import dataset_videos, vllm_engine

from .helpers import model_with_sizes, rlhf_dataset
from .test_qwen3_recipes import needs_main

STAMP = re.compile(r"<(\d+\.\d) seconds>")


def test_recorded_metadata_goes_with_the_videos_that_have_it():
    a, b, c = torch.zeros(2, 3, 32, 32), torch.zeros(4, 3, 32, 32), torch.zeros(2, 3, 32, 32)
    meta_a = {"fps": 4.0, "frames_indices": [0, 4], "total_num_frames": 48}
    meta_b = {"fps": 4.0, "frames_indices": [8, 12, 16, 20], "total_num_frames": 48}
    vllm_engine.record_sample_fps(a, 1.0, meta_a)
    vllm_engine.record_sample_fps(b, 1.0, meta_b)
    vllm_engine.record_sample_fps(c, 1.0)  # a rate, no metadata
    out = dataset_videos.with_video_metadata({"text": ["x"], "videos": [a, b]})
    assert out["video_metadata"] == [meta_a, meta_b] and out["do_sample_frames"] is False
    assert dataset_videos.with_video_metadata({"videos": [a, c]}) == {"videos": [a, c]}, "one without: as before"
    own = {"videos": [a], "video_metadata": [{"fps": 2.0}]}
    assert dataset_videos.with_video_metadata(own) is own, "the caller's own metadata wins"
    assert dataset_videos.with_video_metadata({"images": [a]}) == {"images": [a]}
    assert vllm_engine.recorded_metadata(a.clone()) is None, "metadata belongs to its tensor only"


def test_only_a_qwen3_vl_processor_is_wrapped_and_it_stays_one(tiny_qwen3_processor, tiny_processor):
    assert dataset_videos.timed_processor(tiny_processor) is tiny_processor  # Qwen2.5-VL: time is in its M-RoPE
    assert dataset_videos.timed_processor(None) is None
    timed = dataset_videos.timed_processor(tiny_qwen3_processor)
    assert dataset_videos.timed_processor(timed) is timed
    assert "Qwen3VLProcessor" in type(timed).__name__, "EasyR1 main tells Qwen3-VL by the processor's class name"
    assert timed.tokenizer is tiny_qwen3_processor.tokenizer and timed.video_processor.merge_size == 2
    again = pickle.loads(pickle.dumps(timed))  # datasets hashes and forks the dataset, processor included
    assert type(again) is type(timed) and again.tokenizer.vocab_size == timed.tokenizer.vocab_size
    assert type(copy.deepcopy(timed)) is type(timed)


@pytest.fixture(scope="module")
def qwen3_dataset_config(recipe_path, tiny_qwen3_dir):
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    overrides = [f"worker.actor.model.model_path={tiny_qwen3_dir}", "data.min_pixels=4096", "data.max_pixels=16384"]
    return load_recipe(recipe_path, overrides)[0]


@needs_main
def test_easyr1_mains_dataset_writes_the_timestamps_of_the_frames_it_reads(qwen3_dataset_config, tiny_qwen3_dir):
    """12 frames over 12 s: 6 temporal patches, the first near the start, the last near the end (a frame pair's
    time is the mean of its two frames'). Without the seam: 2 patches at <0.1 seconds> and <0.4 seconds>."""
    from verl.utils.tokenizer import get_processor, get_tokenizer

    tokenizer = get_tokenizer(str(tiny_qwen3_dir))
    dataset = rlhf_dataset(qwen3_dataset_config, tokenizer, get_processor(str(tiny_qwen3_dir)))
    row = dataset[0]
    ids = row["input_ids"][row["attention_mask"].bool()]
    stamps = [float(s) for s in STAMP.findall(tokenizer.decode(ids))]
    assert len(stamps) == 6, stamps
    assert stamps == sorted(stamps) and stamps[0] < 1.0 and stamps[-1] > 10.0, stamps
    video_tokens = int((ids == tokenizer.convert_tokens_to_ids("<|video_pad|>")).sum())
    frames = dataset_videos_frames(row, qwen3_dataset_config)
    assert frames.shape[0] == 12
    height, width = (round(side / 32) for side in frames.shape[-2:])  # the processor's grid of 32-px tokens
    assert video_tokens == 6 * height * width, "a token for every merged patch of every frame pair"


def dataset_videos_frames(row, config):
    """The frames EasyR1's workers decode for the row (``process_video`` at the recipe's pixel bounds and rate)."""
    from verl.utils.dataset import process_video

    video = row["multi_modal_data"]["videos"][0]
    return process_video(video, config.data.min_pixels, config.data.max_pixels, config.data.video_fps)


@pytest.fixture(scope="module")
def released_bounds_dir(tiny_qwen3_dir, tmp_path_factory):
    """The tiny Qwen3-VL with a released checkpoint's image-processor bounds: at least 65,536 pixels per image (its
    video processor bounds whole clips: at least 4,096)."""
    dest = tmp_path_factory.mktemp("qwen3-released-bounds")
    return model_with_sizes(tiny_qwen3_dir, dest, "preprocessor_config.json", 65536, 16777216)


@needs_main
def test_the_actor_reads_a_qwen3_vl_rows_video_as_the_prompt_counts_it(qwen3_dataset_config, released_bounds_dir):
    """EasyR1's ``_process_multi_modal_inputs`` reads a row's frames with the image processor, which upscales frames
    under 65,536 pixels (a released Qwen3-VL's bound): more vision tokens than the prompt holds. Through the seam the
    video processor reads them, as the dataset and vLLM do: as many tokens as the prompt's video pads."""
    from verl.protocol import DataProto
    from verl.utils.tokenizer import get_processor, get_tokenizer
    from verl.workers import fsdp_workers

    from zoomzero_plugin.hosts.easyr1.seams import MARK

    tokenizer, processor = get_tokenizer(str(released_bounds_dir)), get_processor(str(released_bounds_dir))
    row = rlhf_dataset(qwen3_dataset_config, tokenizer, processor)[0]
    pads = int((row["input_ids"] == tokenizer.convert_tokens_to_ids("<|video_pad|>")).sum())
    data = qwen3_dataset_config.data
    meta = {"min_pixels": data.min_pixels, "max_pixels": data.max_pixels, "video_fps": data.video_fps}

    def vision_tokens(process) -> int:
        worker = type("Worker", (), {"processor": processor, "_cache": {}})()
        batch = DataProto.from_dict(
            non_tensors={
                "uid": np.array(["u0"], dtype=object),
                "multi_modal_data": np.array([dict(row["multi_modal_data"])], dtype=object),
            },
            meta_info=meta,
        )
        process(worker, batch)
        grid = batch.non_tensor_batch["multi_modal_inputs"][0]["video_grid_thw"]
        return int(grid.prod()) // 4  # merged 2x2

    seam = fsdp_workers.FSDPWorker._process_multi_modal_inputs
    assert getattr(seam, MARK, None), "the plugins' seam is in place"
    assert pads > 0 and vision_tokens(seam) == pads
    assert vision_tokens(seam.__wrapped__) > pads, "EasyR1's own reading upscales the frames (the failure it fixes)"
