"""Rows for verl: this package's dataset rows (``zoomzero data convert``) in the layout verl's ``RLHFDataset`` reads.

A row here is ``prompt`` (a string with one ``<video>``), ``videos`` (one path) and ``answer`` (the answer JSON). verl
reads ``prompt`` as chat messages, each video as a qwen-vl-utils element (its sampling rate and pixel limits are the
row's, not the dataset's), and the reward's inputs from ``reward_model.ground_truth``; ``data_source`` names the rows'
origin and ``extra_info.index`` each row. The coarse pass's video budget (EasyR1's ``data.video_fps``,
``min_pixels``/``max_pixels`` and ``MODEL_SEQ_LEN``) becomes each video element's ``fps``, ``min_pixels``,
``max_pixels`` and ``total_pixels``.

  zoomzero verl rows data/train/rows.jsonl data/verl/train.parquet --fps 1 --max-visual-tokens 8192
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping
from typing import Any

from zoomzero_plugin import rows as core_rows
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.zoom import ZoomBudget
from zoomzero_plugin.rows import ANSWER_KEY, PROMPT_KEY, VIDEO_KEY, read_rows, write_rows
from zoomzero_plugin.vision import DEFAULT_GEOMETRY

DATA_SOURCE = "zoomzero"
ZOOM_ANSWER = "zoom_answer"  # extra_fields: the zoom pass's letter (None: no pass, or no letter)
_PAPER = ZoomBudget()


def video_element(path: str, fps: float, min_pixels: int, max_pixels: int, max_visual_tokens: int | None) -> dict:
    """The qwen-vl-utils element of one video: its rate and per-frame pixel limits, and the pass's token budget as
    ``total_pixels`` (L_v tokens of ``factor``² pixels, qwen-vl-utils' own unit)."""
    element: dict[str, Any] = {"video": str(path), "fps": float(fps), "min_pixels": int(min_pixels)}
    element["max_pixels"] = int(max_pixels)
    if max_visual_tokens is not None:
        element["total_pixels"] = int(max_visual_tokens) * DEFAULT_GEOMETRY.factor**2
    return element


def verl_row(row: Mapping[str, Any], index: int, video: Mapping[str, Any], agent_loop: str | None = None) -> dict:
    """One row in verl's layout; ``video`` holds the element keys every video gets (fps, pixel limits)."""
    truth = core_rows.row_truth(dict(row))  # ValueError naming the fault when the answer column cannot be read
    videos = row[VIDEO_KEY]
    if not isinstance(videos, list) or len(videos) != 1:
        raise ValueError(f"row {index}: needs exactly one video in '{VIDEO_KEY}', got {videos!r}")
    prompt = str(row[PROMPT_KEY])
    if prompt.count("<video>") != 1:
        raise ValueError(f"row {index}: the prompt needs exactly one '<video>' placeholder")
    out = {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": prompt}],
        "videos": [{**video, "video": str(videos[0])}],
        "ability": "video",
        "reward_model": {"style": "rule", "ground_truth": _answer_json(row[ANSWER_KEY])},
        "extra_info": {"index": index, "qid": truth.qid},
    }
    if agent_loop is not None:
        out["agent_name"] = agent_loop
    return out


def _answer_json(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer)


def verl_rows(rows: Iterable[Mapping[str, Any]], video: Mapping[str, Any], agent_loop: str | None = None) -> list:
    return [verl_row(row, i, video, agent_loop) for i, row in enumerate(rows)]


def trajectory_truth(kwargs: Mapping[str, Any]) -> GroundTruth:
    """The row's ground truth (``reward_model.ground_truth``: the answer JSON of a converted row)."""
    reward_model = kwargs.get("reward_model") or {}
    if "ground_truth" not in reward_model:
        raise ValueError("a zoomzero row needs reward_model.ground_truth (its answer JSON)")
    return GroundTruth.parse(reward_model["ground_truth"])


def row_video(messages: Any) -> str:
    """The one video file of a row's prompt messages (verl's RLHFDataset makes each ``<video>`` a content item)."""
    videos = [
        item.get("video")
        for message in messages
        for item in (message.get("content") if isinstance(message.get("content"), list) else [])
        if isinstance(item, Mapping) and item.get("type") == "video"
    ]
    if len(videos) != 1 or not isinstance(videos[0], str):
        raise ValueError(f"the zoom pass needs exactly one video file per row, got {videos!r}")
    return videos[0]


SEED_STRIDE = 1_000_003  # trajectories per step before two steps' seeds could meet


def trajectory_seed(base: int, kwargs: Mapping[str, Any], turn: int = 0) -> int:
    """vLLM's sampling seed of one trajectory's ``turn``: the rollout's seed, the step, the row and the sample
    (``rollout.seed + STRIDE · step + 1,009 · (row · n + sample) + turn``): a run is reproducible, a resumed step
    samples what the first launch sampled, and every trajectory and step draws its own numbers."""
    step = int(kwargs.get("global_steps", 0) or 0)
    row = int(kwargs.get("index", 0) or 0)
    sample = int(kwargs.get("session_id", 0) or 0)
    return (int(base) + SEED_STRIDE * step + 1009 * (row * 64 + sample) + turn) % (2**31 - 1)


def media_kind(multi_modal_data: Mapping[str, Any] | None) -> str:
    """What a trajectory shows the model: ``images``, ``video`` or ``images+video`` (``text`` for none)."""
    data = multi_modal_data or {}
    kinds = [k for k, key in (("images", "images"), ("video", "videos")) if data.get(key)]
    return "+".join(kinds) or "text"


def clip_metadata(frames: int, sample_fps: float) -> dict[str, Any]:
    """Decoder metadata under which a clip's ``frames`` read at ``sample_fps``: Qwen's processors (vLLM's and the
    trainer's) take a video's rate as ``len(frames_indices) / total_num_frames · fps``."""
    return {
        "fps": float(sample_fps),
        "frames_indices": list(range(frames)),
        "total_num_frames": frames,
        "duration": frames / float(sample_fps),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="rows of this package (.jsonl/.json/.parquet)")
    parser.add_argument("target", help="verl rows to write (.parquet, or .jsonl)")
    parser.add_argument("--fps", type=float, default=_PAPER.fps, help="video frames per second (default %(default)s)")
    parser.add_argument("--min-pixels", type=int, default=_PAPER.min_frame_pixels, help="pixels per frame at least")
    parser.add_argument("--max-pixels", type=int, default=_PAPER.max_frame_pixels, help="pixels per frame at most")
    parser.add_argument(
        "--max-visual-tokens",
        type=int,
        default=_PAPER.max_visual_tokens,
        help="visual tokens of a whole video (qwen-vl-utils total_pixels; default %(default)s)",
    )
    parser.add_argument("--agent-loop", choices=("zoomzero", "videozoomer"), help="an agent_name column")


def run(args: argparse.Namespace) -> int:
    element = video_element("", args.fps, args.min_pixels, args.max_pixels, args.max_visual_tokens)
    element.pop("video")
    rows = verl_rows(read_rows(args.source), element, args.agent_loop)
    written = write_rows(args.target, rows)
    print(f"{written} verl rows -> {args.target} (video elements: {json.dumps(element)})")
    return 0
