"""A verified trajectory as a LLaMA-Factory sharegpt sample: messages with ``<image>`` placeholders and the
frame images, in turn order.

A sample's ``messages`` are ``system`` (the prompt variant's system text), ``user`` (the question with the
overview frames), then ``assistant`` turns, each call turn followed by the tool's reply. Every image is
preceded in the text by its label ``<frame{i}_time{t:.2f}s>``, exactly as the agent environment renders it
for the model. ``frames`` lists, per ``<image>`` in order, the native frame index to decode.

The tool's reply is written with the role ``user`` by default: LLaMA-Factory's ``qwen2_vl`` template renders
an ``observation`` turn as ``<tool_response>\\n{content}\\n</tool_response>``, which cannot reproduce the
released observation texts (their instruction follows ``</tool_response>``; the SFT-data variant has no
wrapper at all). As ``user`` turns the rendered tokens are the rollout's own, and the labels are the same:
LLaMA-Factory trains on assistant turns only. ``observation_role="observation"`` is available for templates
that wrap tool replies the way a dataset wants.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...agent import Trajectory
from ...agent.environment import parts_text
from ...agent.transcript import IMAGE

DATASET_NAME = "videozoomer_sft"
ROLE_TAGS = {
    "role_tag": "role",
    "content_tag": "content",
    "user_tag": "user",
    "assistant_tag": "assistant",
    "observation_tag": "observation",
    "system_tag": "system",
}
OBSERVATION_ROLES = ("user", "observation")


@dataclass
class Sample:
    """One SFT sample before its frames are written. ``frames[k]``: native index of the k-th ``<image>``."""

    id: str
    source: str
    qid: str
    video: str
    messages: list[dict[str, str]]
    frames: list[int]
    images: list[str] = field(default_factory=list)  # relative paths, once written

    @property
    def placeholders(self) -> int:
        return sum(m["content"].count(IMAGE) for m in self.messages)

    def row(self) -> dict[str, Any]:
        """The JSON line LLaMA-Factory reads (extra keys are ignored by its loader)."""
        return {"id": self.id, "source": self.source, "qid": self.qid, "messages": self.messages, "images": self.images}


def build_sample(
    sample_id: str, source: str, qid: str, traj: Trajectory, user_text: str, observation_role: str = "user"
) -> Sample:
    """Render a (verified) trajectory. ``user_text`` is the first user turn with ``<video>`` where the overview
    goes (see :func:`zoomzero_plugin.agent.question_text`)."""
    if observation_role not in OBSERVATION_ROLES:
        raise ValueError(f"observation_role must be one of {OBSERVATION_ROLES}, got {observation_role!r}")
    messages, frames = conversation(traj, user_text, observation_role)
    return Sample(
        sample_id, source, qid, traj.video.path, [{"role": "system", "content": traj.prompts.system}, *messages], frames
    )


def conversation(
    traj: Trajectory, user_text: str, observation_role: str = "user"
) -> tuple[list[dict[str, str]], list[int]]:
    """The trajectory so far after its system prompt, and the native frame index of each ``<image>`` in order.

    Messages: the first user turn (``user_text`` with the labelled overview), then each assistant turn, a call
    turn followed by the tool's reply with the role ``observation_role``."""
    messages = [{"role": "user", "content": parts_text(traj.user_parts(user_text), IMAGE)}]
    frames = [f.frame for f in traj.overview]
    for step in traj.steps:
        messages.append({"role": "assistant", "content": step.turn.text})
        if step.observation is not None:
            messages.append({"role": observation_role, "content": step.observation.text(IMAGE)})
            frames += [f.frame for f in step.observation.frames]
    return messages, frames


def structure_problems(sample: Sample) -> list[str]:
    """What LLaMA-Factory would drop or refuse, found without it: role order and media count."""
    problems = []
    roles = [m["role"] for m in sample.messages]
    body = roles[1:] if roles and roles[0] == "system" else roles
    for i, role in enumerate(body):
        expected = ("user", "observation") if i % 2 == 0 else ("assistant",)
        if role not in expected:
            problems.append(
                f"message {i + (len(roles) - len(body))} is {role!r} where {' or '.join(expected)} "
                "must be (turns alternate user/observation → assistant)"
            )
            break
    if not body or len(body) % 2:
        problems.append(
            f"{len(body)} messages after the system prompt: must be an even number ending with the assistant"
        )
    if sample.placeholders != len(sample.frames):
        problems.append(f"{sample.placeholders} {IMAGE} placeholders for {len(sample.frames)} frames")
    if sample.images and len(sample.images) != len(sample.frames):
        problems.append(f"{len(sample.images)} image files for {len(sample.frames)} frames")
    return problems


def write_frames(sample: Sample, images: Sequence[Any], root: Path, fmt: str = "png") -> None:
    """Save ``images`` (PIL, one per frame) under ``root/images/<sample id>/`` and record their paths,
    relative to ``root`` (LLaMA-Factory resolves them against its ``media_dir``, the dataset folder)."""
    folder = Path("images") / sample.id
    (root / folder).mkdir(parents=True, exist_ok=True)
    paths = []
    for k, image in enumerate(images):
        rel = folder / f"{k:03d}.{fmt}"
        image.save(root / rel)
        paths.append(rel.as_posix())
    sample.images = paths


def dataset_info(name: str, file_name: str) -> dict[str, Any]:
    """The ``dataset_info.json`` entry for a sharegpt file with ``messages`` and ``images`` columns."""
    return {
        name: {
            "file_name": file_name,
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"},
            "tags": dict(ROLE_TAGS),
        }
    }


def jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
