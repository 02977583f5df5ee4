"""One JSON-able record of a trajectory: every turn's text, its call, the frames (times) or the error it got.

The same record serves evaluation predictions (``predictions.jsonl``'s ``transcript``), the SFT export (the
frames are named by native index and time, so they can be decoded again in turn order) and the tool
statistics of reports. ``observation`` is the user turn's text with each frame as ``<frame{i}_time{t}s><image>``, or,
for a trajectory whose clips were shown as videos (``"clip_as": "video"``, recorded then), each clip as
``<clip_time{a}s-{b}s><video>``.

Shape (``to_dict``)::

    {"prompt": "eval", "video": {"path", "frames", "fps", "duration"},
     "overview": {"frames": [int], "times": [s]},
     "turns": [{"text", "kind": "call"|"answer"|"none", "call": {"segment", "fps", "frames"} | null,
                "error": {"code", "message", "kind"} | null, "clip": {"frames", "times"} | null,
                "observation": str | null, "problems": [str], "tokens": int | null}],
     "end": "answer"|"no_answer"|"last_round_call"|"total_tokens"|null, "answer": "B" | null,
     "calls": int, "errors": int, "clip_frames": int, "images": int[, "clip_as": "video"]}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .environment import END_ANSWER, Frame, Trajectory, VideoInfo
from .render import check_clip_as, response_text

IMAGE = "<image>"  # the frame placeholder in stored observation texts
VIDEO = "<video>"  # the clip placeholder in stored observation texts (clip_as: video)


def frame_record(frames: Sequence[Frame]) -> dict[str, list]:
    """Frames as stored: native indices and times (s)."""
    return {"frames": [f.frame for f in frames], "times": [round(f.time, 6) for f in frames]}


def video_record(video: VideoInfo) -> dict[str, Any]:
    """A video as stored: path, frame count, native fps and duration (s)."""
    return {"path": video.path, "frames": video.frames, "fps": video.fps, "duration": round(video.duration, 6)}


@dataclass(frozen=True)
class TurnRecord:
    text: str
    kind: str
    call: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    clip: dict[str, list] | None = None
    observation: str | None = None
    problems: tuple[str, ...] = ()
    tokens: int | None = None  # tokens the model generated in this turn, when the caller counted them

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "call": self.call,
            "error": self.error,
            "clip": self.clip,
            "observation": self.observation,
            "problems": list(self.problems),
            "tokens": self.tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TurnRecord:
        return cls(
            d["text"],
            d["kind"],
            d.get("call"),
            d.get("error"),
            d.get("clip"),
            d.get("observation"),
            tuple(d.get("problems") or ()),
            d.get("tokens"),
        )


@dataclass(frozen=True)
class Transcript:
    prompt: str
    video: dict[str, Any]
    overview: dict[str, list]
    turns: tuple[TurnRecord, ...]
    end: str | None
    answer: str | None
    calls: int
    errors: int
    clip_frames: int
    images: int
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_trajectory(
        cls, traj: Trajectory, tokens: Sequence[int | None] = (), clip_as: str = "images"
    ) -> Transcript:
        """Record ``traj`` as it stands; ``tokens[i]``: tokens generated in turn ``i`` (when known); ``clip_as``: how
        its clips were shown (:data:`~.render.CLIP_AS`)."""
        video = VIDEO if check_clip_as(clip_as) == "video" else None
        turns = []
        for i, step in enumerate(traj.steps):
            obs = step.observation
            turns.append(
                TurnRecord(
                    text=step.turn.text,
                    kind=step.turn.kind,
                    call=step.turn.call.to_dict() if step.turn.call else None,
                    error=step.error.to_dict() if step.error else None,
                    clip=frame_record(obs.frames) if obs is not None and step.error is None else None,
                    observation=obs.text(IMAGE, video) if obs is not None else None,
                    problems=step.turn.problems,
                    tokens=tokens[i] if i < len(tokens) else None,
                )
            )
        final = traj.steps[-1].turn if traj.steps else None
        return cls(
            prompt=traj.prompts.name,
            video=video_record(traj.video),
            overview=frame_record(traj.overview),
            turns=tuple(turns),
            end=traj.end,
            answer=final.letter if final is not None and traj.end == END_ANSWER else None,
            calls=traj.calls,
            errors=traj.errors,
            clip_frames=traj.clip_frames,
            images=traj.images,
            extra={"clip_as": clip_as} if video else {},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "video": self.video,
            "overview": self.overview,
            "turns": [t.to_dict() for t in self.turns],
            "end": self.end,
            "answer": self.answer,
            "calls": self.calls,
            "errors": self.errors,
            "clip_frames": self.clip_frames,
            "images": self.images,
            **self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Transcript:
        """Read a stored record back; ValueError naming the missing key."""
        known = ("prompt", "video", "overview", "turns", "end", "answer", "calls", "errors", "clip_frames", "images")
        missing = [k for k in known if k not in d]
        if missing:
            raise ValueError(f"transcript lacks {missing}")
        return cls(
            d["prompt"],
            d["video"],
            d["overview"],
            tuple(TurnRecord.from_dict(t) for t in d["turns"]),
            d["end"],
            d["answer"],
            int(d["calls"]),
            int(d["errors"]),
            int(d["clip_frames"]),
            int(d["images"]),
            {k: v for k, v in d.items() if k not in known},
        )

    def video_info(self) -> VideoInfo:
        """The recorded video as the environment reads it (path, frames, native fps); ValueError, KeyError or
        TypeError when the record is unusable."""
        v = self.video
        return VideoInfo(str(v["path"]), int(v["frames"]), float(v["fps"]))

    @property
    def rounds(self) -> int:
        return len(self.turns)

    @property
    def clip_as(self) -> str:
        """How the clips were shown: images (the authors' way) or video."""
        return str(self.extra.get("clip_as", "images"))

    def response_text(self, image: str = IMAGE, video: str = VIDEO) -> str:
        """Everything after the first prompt as one string (see :func:`.render.response_text`), each stored image
        and video placeholder replaced by ``image`` / ``video``."""

        def shown(observation: str) -> str:
            observation = observation.replace(IMAGE, image)
            return observation.replace(VIDEO, video) if self.clip_as == "video" else observation

        return response_text(
            [(t.text, shown(t.observation) if t.observation is not None else None) for t in self.turns]
        )
