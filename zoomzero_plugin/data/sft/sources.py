"""Where SFT trajectories come from. Each source yields :class:`Candidate` trajectories, replayed through the
agent environment and judged by :mod:`.verify`:

- ``teacher`` (a): a teacher model behind an OpenAI-compatible endpoint plays the agent on dataset rows, with
  the ``sft`` prompt variant (the authors' data-generation prompt) unless told otherwise;
- ``predictions`` (b): transcripts from ``zoomzero eval --mode agent`` runs (one file or several sampled runs):
  rejection sampling keeps the verified-correct ones;
- ``reflection`` (c): a first model's failed trajectories (wrong answer after ≥ 1 call) are shown to the
  teacher with the authors' reflection prompt; its corrected call and answer continue the failed trajectory
  (its final turn removed) in the same environment, as the authors assembled their reflection data.

Teacher requests are journalled one reply per line (key: source/qid/sample/turn, with a digest of the request):
a killed run replays what it has and sends only what is missing; a reply in flight at the kill is asked again.
A journal made with other settings (model, temperature, prompts, budgets) is refused, not mixed in.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...agent import AgentBudget, Trajectory, VideoInfo, get_prompts, question_text
from ...agent.baseline import NO_TOOL
from ...agent.frames import FrameReader
from ...agent.prompts import REFLECTION_SYSTEM
from ...agent.transcript import IMAGE, Transcript
from ...errors import DataError, ResumeError
from ...eval.predictions import PredictionsFile, load_predictions
from ...ground_truth import GroundTruth
from ...inference.passes import Question
from ...journal import Journal
from .sharegpt import conversation
from .teacher import TeacherClient, openai_messages
from .verify import Verdict, judge, replay, verify_transcript

SOURCES = ("teacher", "predictions", "reflection")


@dataclass(frozen=True)
class AgentQuestion:
    """One dataset row as the agent sees it: the video, the truth, the first user turn's text."""

    qid: str
    video: str
    truth: GroundTruth

    @property
    def user_text(self) -> str:
        return question_text(self.truth.question, self.truth.options)


@dataclass(frozen=True)
class Candidate:
    """A trajectory offered for SFT, with its verdict."""

    source: str
    qid: str
    index: int  # sample number within (source, qid)
    user_text: str
    verdict: Verdict


def questions_from_rows(rows: Sequence[dict[str, Any]], where: str) -> dict[str, AgentQuestion]:
    """qid → AgentQuestion. The rows are checked as ``zoomzero eval`` checks them (answer column, exactly one video,
    unique qids; the videos themselves are probed later): one DataError naming the bad rows."""
    checked = Question.from_rows(rows, where, videos=False)
    return {q.qid: AgentQuestion(q.qid, q.video, q.truth) for q in checked}


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


class ReplyJournal:
    """Teacher replies by request key, durable (fsync'd lines), thread-safe, with request digests checked."""

    def __init__(self, path: str | Path):
        self._journal = Journal(path, key="key", way_out="Delete it or pass --restart (the teacher is asked again)")
        self._by_key = {r["key"]: r for r in self._journal.records}
        self._lock = threading.Lock()
        self.replayed = 0

    def get(self, key: str, digest: str) -> str | None:
        """The reply journalled under ``key``, if its request's digest is ``digest``."""
        record = self._by_key.get(key)
        if record is None:
            return None
        if record.get("digest") != digest:
            raise ResumeError(
                f"{self._journal.path}: the request {key} differs from the one journalled (another "
                "teacher model, temperature, prompt or budget?); use another --journal or --restart"
            )
        with self._lock:
            self.replayed += 1
        return record["reply"]

    def put(self, key: str, digest: str, reply: str) -> None:
        with self._lock:
            self._journal.append([{"key": key, "digest": digest, "reply": reply}])
            self._by_key[key] = {"key": key, "digest": digest, "reply": reply}


class VideoFrames:
    """Decoded frames of one video, by native index (a trajectory asks for the overview, then each clip)."""

    def __init__(self, path: str, budget: AgentBudget):
        self.reader = FrameReader(path)
        self.budget = budget
        self._frames: dict[int, Any] = {}

    def get(self, indices: Sequence[int]) -> list[Any]:
        todo = sorted({i for i in indices if i not in self._frames})
        if todo:
            self._frames.update(
                zip(todo, self.reader.read(todo, self.budget.max_frame_pixels, self.budget.min_frame_pixels))
            )
        return [self._frames[i] for i in indices]


class TeacherSession:
    """Plays trajectories with the teacher, one reply per assistant turn, through the journal."""

    def __init__(self, client: TeacherClient, journal: ReplyJournal, budget: AgentBudget):
        self.client, self.journal, self.budget = client, journal, budget

    def _settings(self) -> dict[str, Any]:
        """What a reply depends on besides the messages."""
        cfg = self.client.cfg
        budget = self.budget.to_dict()
        return {"model": cfg.model, "temperature": cfg.temperature, "max_tokens": cfg.max_new_tokens, "budget": budget}

    def reply(
        self, key: str, messages: list[dict[str, str]], frames: list[int], cache: Callable[[], VideoFrames]
    ) -> str:
        """The teacher's reply to ``messages`` (``<image>`` k shows native frame ``frames[k]``)."""
        digest = _digest(self._settings(), messages, frames)
        known = self.journal.get(key, digest)
        if known is not None:
            return known
        text = self.client.chat(openai_messages(messages, cache().get(frames)))
        self.journal.put(key, digest, text)
        return text

    def continue_trajectory(
        self,
        key: str,
        traj: Trajectory,
        teacher_messages: list[dict[str, str]],
        teacher_frames: list[int],
        cache: Callable[[], VideoFrames],
    ) -> None:
        """Let the teacher take the assistant turns of ``traj`` until it ends; the teacher reads
        ``teacher_messages`` (extended turn by turn with its replies and the environment's observations)."""
        turn = 0
        while not traj.done:
            text = self.reply(f"{key}/{turn}", teacher_messages, teacher_frames, cache)
            step = traj.step(text)
            teacher_messages.append({"role": "assistant", "content": step.turn.text})
            if step.observation is not None:
                teacher_messages.append({"role": "user", "content": step.observation.text(IMAGE)})
                teacher_frames.extend(f.frame for f in step.observation.frames)
            turn += 1


def _lazy_cache(path: str, budget: AgentBudget) -> Callable[[], VideoFrames]:
    box: list[VideoFrames] = []

    def get() -> VideoFrames:
        if not box:
            box.append(VideoFrames(path, budget))
        return box[0]

    return get


def teacher_candidates(
    session: TeacherSession,
    questions: Iterable[AgentQuestion],
    videos: dict[str, VideoInfo],
    samples: int,
    prompt: str,
    min_calls: int,
    workers: int = 4,
    progress: Callable[[int], None] | None = None,
) -> list[Candidate]:
    """(a) ``samples`` teacher trajectories per question, played in ``workers`` threads."""
    jobs = [(q, k) for q in questions for k in range(samples)]

    def run(job: tuple[AgentQuestion, int]) -> Candidate:
        q, k = job
        traj = Trajectory(videos[q.video], session.budget, get_prompts(prompt))
        messages, frames = conversation(traj, q.user_text)
        session.continue_trajectory(
            f"teacher/{q.qid}/{k}",
            traj,
            [{"role": "system", "content": traj.prompts.system}, *messages],
            frames,
            _lazy_cache(q.video, session.budget),
        )
        reason, detail = judge(traj, q.truth.answer, min_calls)
        if progress:
            progress(1)
        return Candidate("teacher", q.qid, k, q.user_text, Verdict(traj, reason, detail))

    return _map(run, jobs, workers)


def _map(fn, jobs, workers):
    if workers <= 1:
        return [fn(j) for j in jobs]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, jobs))


def read_transcripts(paths: Sequence[str | Path]) -> tuple[list[tuple[str, Transcript]], list[PredictionsFile]]:
    """(qid, transcript) for every agent prediction in ``paths`` (``transcript``, or a ``transcripts`` list), and
    the files whose cut last line was skipped (:meth:`PredictionsFile.warning` says so). DataError for a file
    that is missing, unreadable or holds no predictions."""
    out, torn = [], []
    for path in paths:
        try:
            loaded = load_predictions(path)
            loaded.require_records()
        except (FileNotFoundError, ValueError) as e:
            raise DataError(f"--predictions: {e}") from None
        if loaded.torn:
            torn.append(loaded)
        for number, record in enumerate(loaded.records, 1):
            found = record.get("transcripts") or ([record["transcript"]] if record.get("transcript") else [])
            if not found:
                raise DataError(
                    f"{path}: prediction {number} (qid {record.get('qid')!r}) has no transcript: was it "
                    "made with `zoomzero eval --mode agent`?"
                )
            if any(isinstance(t, dict) and t.get("prompt") == NO_TOOL for t in found):
                raise DataError(
                    f"{path}: prediction {number} (qid {record.get('qid')!r}) is the no-tool baseline's "
                    "(`zoomzero eval --no-tool`): it has no tool trajectory to learn from; pass the "
                    "predictions of a run with the tool"
                )
            for t in found:
                try:
                    out.append((str(record["qid"]), Transcript.from_dict(t)))
                except (ValueError, KeyError, TypeError) as e:
                    raise DataError(f"{path}: prediction {number}: unreadable transcript ({e})") from None
    return out, torn


def _user_text(transcript: Transcript, question: AgentQuestion) -> str:
    return str(transcript.extra.get("user") or question.user_text)


def prediction_candidates(
    transcripts: Sequence[tuple[str, Transcript]],
    questions: dict[str, AgentQuestion],
    budget: AgentBudget,
    min_calls: int,
) -> list[Candidate]:
    """(b) every stored transcript, replayed and judged (rejection sampling keeps the verified-correct)."""
    counts: dict[str, int] = {}
    out = []
    for qid, transcript in transcripts:
        question = questions[qid]
        k = counts[qid] = counts.get(qid, -1) + 1
        verdict = verify_transcript(transcript, question.truth.answer, budget, min_calls)
        out.append(Candidate("predictions", qid, k, _user_text(transcript, question), verdict))
    return out


def reflection_request(traj: Trajectory, user_text: str) -> tuple[list[dict[str, str]], list[int]]:
    """What the reflection teacher reads (the authors' layout): its system prompt, then one user turn holding the
    failed trajectory so far, each message as ``"{role}: \\n"`` + its content (frames inline)."""
    messages, frames = conversation(traj, user_text)
    text = "".join(f"{m['role']}: \n{m['content']}" for m in messages)
    return [{"role": "system", "content": REFLECTION_SYSTEM}, {"role": "user", "content": text}], frames


def reflection_candidates(
    session: TeacherSession,
    transcripts: Sequence[tuple[str, Transcript]],
    questions: dict[str, AgentQuestion],
    min_calls: int,
    workers: int = 4,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Candidate], dict[str, int]]:
    """(c) failed trajectories with ≥ 1 call, corrected by the teacher. Returns the candidates and how many
    transcripts were not eligible, by reason (``not_failed``, ``no_call``, ``no_room``, ``inconsistent``)."""
    skipped: dict[str, int] = {}
    jobs = []
    counts: dict[str, int] = {}
    for qid, transcript in transcripts:
        question = questions[qid]
        full = verify_transcript(transcript, question.truth.answer, session.budget)
        why = (
            "inconsistent"
            if full.reason == "inconsistent"
            else "not_failed"
            if full.reason is None
            else "no_call"
            if full.trajectory.calls == 0
            else None
        )
        if why is None:
            # the failed trajectory without its final turn must leave the teacher a round to call in
            prefix, _ = replay(
                full.trajectory.video,
                [s.turn.text for s in full.trajectory.steps[:-1]],
                session.budget,
                transcript.prompt,
            )
            why = "no_room" if prefix.done or prefix.round >= session.budget.last_turn else None
        if why is not None:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        k = counts[qid] = counts.get(qid, -1) + 1
        jobs.append((qid, k, transcript, _user_text(transcript, question)))

    def run(job) -> Candidate:
        qid, k, transcript, user_text = job
        question = questions[qid]
        turns = [t.text for t in transcript.turns[:-1]]
        traj, _ = replay(transcript.video_info(), turns, session.budget, transcript.prompt)
        messages, frames = reflection_request(traj, user_text)
        session.continue_trajectory(
            f"reflection/{qid}/{k}", traj, messages, frames, _lazy_cache(traj.video.path, session.budget)
        )
        reason, detail = judge(traj, question.truth.answer, min_calls)
        if progress:
            progress(1)
        return Candidate("reflection", qid, k, user_text, Verdict(traj, reason, detail))

    return _map(run, jobs, workers), skipped
