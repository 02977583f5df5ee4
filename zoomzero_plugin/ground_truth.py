"""The answer column of a dataset row: what a reward needs to know about one question."""

from __future__ import annotations

import json
import math
import string
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .spans import Span, clean_spans

LETTERS = string.ascii_uppercase


@dataclass(frozen=True)
class GroundTruth:
    """One question's truth. ``spans`` may be empty (MCQ-only benchmarks); seconds are absolute."""

    answer: str  # option letter
    options: tuple[str, ...]
    spans: tuple[Span, ...]
    duration: float
    qid: str
    question: str = ""  # kept so a zoom pass can re-ask it without the prompt
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def letters(self) -> str:
        """The option letters, ``"ABCD"`` for four options."""
        return LETTERS[: len(self.options)]

    def to_json(self) -> str:
        d = asdict(self)
        d["options"], d["spans"] = list(self.options), [list(s) for s in self.spans]
        extra = d.pop("extra")
        return json.dumps({**extra, **d}, ensure_ascii=False)

    @classmethod
    def parse(cls, value: str | Mapping[str, Any]) -> GroundTruth:
        """Read the JSON string (or dict) of a row's answer column. Raises ValueError naming the fault."""
        if isinstance(value, (str, bytes)):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                raise ValueError(f"ground truth is not JSON: {e}") from None
        if not isinstance(value, Mapping):
            raise ValueError(f"ground truth must be a JSON object, got {type(value).__name__}")
        missing = [k for k in ("answer", "options", "duration", "qid") if k not in value]
        if missing:
            raise ValueError(f"ground truth lacks {missing}; has {sorted(value)}")
        options = tuple(str(o) for o in value["options"])
        answer = truth_letter(str(value["answer"])) or ""
        if not answer or answer not in LETTERS[: len(options)]:
            raise ValueError(f"answer {value['answer']!r} is not a letter among {len(options)} options")
        duration = float(value["duration"])
        if not math.isfinite(duration) or duration <= 0:
            raise ValueError(f"duration must be a positive number of seconds, got {value['duration']!r}")
        spans, problems = clean_spans(value.get("spans") or (), duration, keep_points=True)
        if problems:
            raise ValueError(f"ground-truth spans {value.get('spans')!r} are invalid: {problems}")
        known = {"answer", "options", "spans", "duration", "qid", "question"}
        return cls(
            answer=answer,
            options=options,
            spans=tuple(spans),
            duration=duration,
            qid=str(value["qid"]),
            question=str(value.get("question", "")),
            extra={k: v for k, v in value.items() if k not in known},
        )


def truth_letter(text: str) -> str | None:
    """The option letter a ground-truth answer is written as: ``B``, ``(B)``, ``b``, or ``B.`` (VideoZoomer's data
    and reward write a period after the letter; their reward strips one); None for anything else."""
    answer = text.strip()
    if answer.endswith("."):
        answer = answer[:-1].rstrip()
    answer = answer.strip("()").upper()
    return answer if len(answer) == 1 and answer in LETTERS else None
