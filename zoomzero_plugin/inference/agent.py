"""The ``agent`` mode: VideoZoomer's ``<video_zoom>`` loop, batched turn by turn across questions.

Each question gets a :class:`~zoomzero_plugin.agent.Trajectory` and an open video. Each turn is generated
(stopping at ``</video_zoom>``), goes through the environment, and the frames a call returns are decoded (one read
per clip, in the decode threads) and appended with the observation. The prompt a turn sends is exactly what the
authors' rollout builds (:func:`~zoomzero_plugin.agent.render.prompt_text`): the chat template over the system
prompt and the question with its labelled overview frames, then every turn so far.

When turns are generated (``AgentConfig.schedule``): ``continuous`` (the default, on a backend with a request-level
engine: vLLM) sends each question's next turn to the engine as soon as its observation is ready, while other turns
are still generating (:func:`~zoomzero_plugin.engine.schedule.continuous`); ``rounds`` (and every backend without
such an engine: transformers) runs one ``backend.generate`` per round over the trajectories still going. Both give
the same predictions (greedy decoding: the same words).

With ``AgentConfig(clip_as="video")`` a call's clip reaches the model as one video after its time range, timed by
its own frames (Qwen3-VL's timestamps of the absolute frame times; Qwen2.5-VL's M-RoPE at the clip's own rate);
the overview stays labelled images.

Each prediction keeps the trajectory's transcript (turn texts, calls, frames, errors); its answer is the
final turn's letter. ``spans`` stay empty: the agent does not ground its answer (its calls are in the
transcript).

With ``AgentConfig(tool=False)`` (``zoomzero eval --mode agent --no-tool``) the mode runs the authors' no-tool
baseline instead (:mod:`zoomzero_plugin.agent.baseline`): their system prompt, the video as one video of frames
sampled at 0.2 fps (≤ 120), one reply, the same transcript shape with no calls.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..agent import (
    DEFAULT_PROMPT,
    END_TOTAL_TOKENS,
    AgentBudget,
    Trajectory,
    Transcript,
    first_prompt,
    get_prompts,
    prompt_text,
    question_text,
)
from ..agent.baseline import NO_TOOL_BUDGET, no_tool_prompt, no_tool_transcript, video_frames
from ..agent.clips import clip_video
from ..agent.frames import FrameReader
from ..agent.protocol import STOP
from ..agent.render import check_clip_as, observation_text
from ..engine.schedule import check_schedule, continuous
from ..video_store import decode_pool
from .backend import Backend, FrameVideo, Generation, Request, SamplingParams, open_stream
from .passes import Question
from .prediction import ModeOutput


@dataclass(frozen=True)
class AgentConfig:
    """The agent's budgets, which of the authors' prompts it reads, and how it samples (greedy by default, as the
    authors validate). ``tool=False``: the authors' no-tool baseline (its own system prompt; ``budget``'s overview
    fields set its frames, ``max_new_tokens`` its reply; :func:`no_tool` gives their setting)."""

    budget: AgentBudget = field(default_factory=AgentBudget)
    prompt: str = DEFAULT_PROMPT  # train | eval | sft (agent.prompts.PROMPTS); unused without the tool
    temperature: float = 0.0
    tool: bool = True
    clip_as: str = "images"  # images (the authors' way) | video: each clip one video (agent.render.CLIP_AS)
    schedule: str = "continuous"  # continuous | rounds: when turns are generated (the module docstring)

    def __post_init__(self) -> None:
        get_prompts(self.prompt)
        check_clip_as(self.clip_as)
        check_schedule(self.schedule, "agent schedule")
        if not self.temperature >= 0:
            raise ValueError(f"agent temperature must be >= 0, got {self.temperature}")

    @classmethod
    def no_tool(cls, temperature: float = 0.0) -> AgentConfig:
        """The authors' no-tool evaluation (``scripts/eval_video_notool.sh``)."""
        return cls(budget=NO_TOOL_BUDGET, temperature=temperature, tool=False)

    def sampling(self) -> SamplingParams:
        stop = (STOP,) if self.tool else ()  # the no-tool rollout has no stop string
        return SamplingParams(max_new_tokens=self.budget.max_new_tokens, temperature=self.temperature, stop=stop)


def chat_template(backend: Backend):
    """The function that renders the first prompt: the tokenizer's chat template (as the authors' dataset code
    renders it), or the processor's when the tokenizer has none."""
    tokenizer = backend.tokenizer  # type: ignore[attr-defined]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template
    processor = getattr(backend, "processor", None)
    template = getattr(processor, "chat_template", None)
    if not template:
        raise ValueError("the model has no chat template (neither its tokenizer nor its processor)")
    return lambda messages, **kw: tokenizer.apply_chat_template(messages, chat_template=template, **kw)


@dataclass
class _Run:
    """One question in flight."""

    question: Question
    reader: FrameReader
    trajectory: Trajectory
    first: str
    images: list[Any]
    pairs: list[tuple[str, str | None]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    rounds: list[dict[str, float]] = field(default_factory=list)
    decode_s: float = 0.0
    schedule: str = "rounds"  # how its turns were generated
    clip_as: str = "images"
    temporal_patch: int = 1  # the model's: a clip shown as a video is padded to whole temporal patches
    clip_videos: list[FrameVideo] = field(default_factory=list)

    def request(self) -> Request:
        text = prompt_text(self.first, self.pairs)
        return Request(
            text,
            images=tuple(self.images),
            formatted=True,
            tag=f"{self.question.qid}#{self.trajectory.round}",
            clip_videos=tuple(self.clip_videos),
        )

    def advance(self, gen: Generation, tokenizer: Any) -> list[Any]:
        """Read the turn the backend generated; returns the frames its observation shows (to :meth:`read` before the
        next turn), if any."""
        traj, out = self.trajectory, gen.outputs[0]
        self.rounds.append({k: round(gen.timing.get(k, 0.0), 6) for k in ("prepare_s", "generate_s")})
        left = traj.tokens_left(gen.prompt_tokens)
        if left <= 0:  # the prompt alone used up the response budget
            traj.stop(END_TOTAL_TOKENS)
            return []
        text, ids = out.text, out.token_ids
        cut = len(ids) > left
        if cut:
            ids = ids[:left]
            text = tokenizer.decode(ids, skip_special_tokens=True)
        step = traj.step(text, cut=cut)
        self.tokens.append(len(ids))
        observation = step.observation
        shown = observation_text(observation, self.clip_as) if observation is not None else None
        self.pairs.append((step.turn.text, shown))
        return list(observation.frames) if observation is not None else []

    def read(self, frames) -> None:
        """Decode the last observation's frames (before the next turn) and add them to what the model is shown."""
        start = time.perf_counter()
        self._read_clip(frames)
        self.decode_s += time.perf_counter() - start

    def _read_clip(self, frames) -> None:
        """Decode a call's frames: images, or one video (padded to whole temporal patches) with its timing."""
        b = self.trajectory.budget
        if self.clip_as != "video":
            self.images += self.reader.read([f.frame for f in frames], b.max_frame_pixels, b.min_frame_pixels)
            return
        timing = clip_video(frames, self.reader.info, self.temporal_patch)
        decoded = self.reader.read([f.frame for f in frames], b.max_frame_pixels, b.min_frame_pixels)
        padding = len(timing.indices) - len(decoded)
        self.clip_videos.append(FrameVideo(tuple(decoded + decoded[-1:] * padding), timing))

    def prediction(self) -> ModeOutput:
        q, traj = self.question, self.trajectory
        transcript = Transcript.from_trajectory(traj, self.tokens, self.clip_as)
        record = _record(q, transcript, end=traj.end, frames=traj.images, calls=traj.calls, errors=traj.errors)
        generate = sum(r.get("generate_s", 0.0) + r.get("prepare_s", 0.0) for r in self.rounds)
        timing = {
            "qid": q.qid,
            "rounds": self.rounds,
            "decode_s": round(self.decode_s, 6),
            "total_s": round(generate + self.decode_s, 6),
            "schedule": self.schedule,
        }
        return ModeOutput(record, timing)


def _record(q: Question, transcript, *, end, frames: int, calls: int, errors: int, tool: bool = True) -> dict:
    """An agent question's prediction record (the no-tool baseline's says ``"tool": false``): the transcript's answer
    when it is one of the question's letters."""
    answer = transcript.answer if transcript.answer in q.letters else None
    head = {"qid": q.qid, "answer": answer, "spans": [], "confidence": None, "mode": "agent"}
    if not tool:
        head["tool"] = False
    rest = {"end": end, "frames": frames, "calls": calls, "errors": errors, "transcript": transcript.to_dict()}
    return {**head, **rest}


def _start(q: Question, cfg: AgentConfig, template, temporal_patch: int) -> _Run:
    start = time.perf_counter()
    reader = FrameReader(q.video)
    traj = Trajectory(reader.info, cfg.budget, get_prompts(cfg.prompt))
    images = reader.read([f.frame for f in traj.overview], cfg.budget.max_frame_pixels, cfg.budget.min_frame_pixels)
    first = first_prompt(template, traj.prompts.system, traj.user_parts(question_text(q.question, q.options)))
    return _Run(
        q,
        reader,
        traj,
        first,
        images,
        decode_s=time.perf_counter() - start,
        clip_as=cfg.clip_as,
        temporal_patch=temporal_patch,
    )


def _no_tool_prediction(q: Question, reader: FrameReader, frames, gen: Generation, decode_s: float) -> ModeOutput:
    out = gen.outputs[0]
    transcript = no_tool_transcript(reader.info, frames, out.text, len(out.token_ids))
    record = _record(q, transcript, end=transcript.end, frames=len(frames), calls=0, errors=0, tool=False)
    rounds = [{k: round(gen.timing.get(k, 0.0), 6) for k in ("prepare_s", "generate_s")}]
    timing = {
        "qid": q.qid,
        "rounds": rounds,
        "decode_s": round(decode_s, 6),
        "total_s": round(sum(rounds[0].values()) + decode_s, 6),
    }
    return ModeOutput(record, timing)


def no_tool_mode(backend: Backend, qs: Sequence[Question], agent: AgentConfig) -> list[ModeOutput]:
    """The authors' no-tool baseline: one reply per question to the video as one video, in one ``generate``."""
    template = chat_template(backend)
    requests, inputs = [], []
    for q in qs:
        start = time.perf_counter()
        reader = FrameReader(q.video)
        frames = video_frames(reader.info, agent.budget)
        images = reader.read([f.frame for f in frames], agent.budget.max_frame_pixels, agent.budget.min_frame_pixels)
        prompt = no_tool_prompt(template, question_text(q.question, q.options))
        requests.append(Request(prompt, frames=tuple(images), formatted=True, tag=q.qid))
        inputs.append((reader, frames, time.perf_counter() - start))
    gens = backend.generate(requests, agent.sampling())
    return [
        _no_tool_prediction(q, reader, frames, gen, decode_s)
        for q, (reader, frames, decode_s), gen in zip(qs, inputs, gens)
    ]


class WithAgent(Protocol):
    """A mode configuration with an agent section (:class:`~.modes.ModeConfig`): all the agent mode reads of it."""

    agent: AgentConfig


def agent_mode(backend: Backend, qs: Sequence[Question], cfg: WithAgent) -> list[ModeOutput]:
    """Run every question's trajectory to its end, as ``cfg.agent.schedule`` says (the module docstring)."""
    agent: AgentConfig = cfg.agent
    if not agent.tool:
        return no_tool_mode(backend, qs, agent)
    template = chat_template(backend)
    patch = backend.geometry.temporal_patch  # type: ignore[attr-defined]
    runs = list(decode_pool().map(lambda q: _start(q, agent, template, patch), qs))  # the overviews decode in parallel
    params = agent.sampling()
    stream = open_stream(backend, params) if agent.schedule == "continuous" else None
    if stream is None:
        _rounds(backend, runs, params)
    else:
        _continuous(stream, runs, backend.tokenizer)  # type: ignore[attr-defined]
    return [r.prediction() for r in runs]


def _rounds(backend: Backend, runs: Sequence[_Run], params: SamplingParams) -> None:
    """One ``generate`` per round over the trajectories still going; the round's clips decode in parallel."""
    tokenizer = backend.tokenizer  # type: ignore[attr-defined]
    while active := [r for r in runs if not r.trajectory.done]:
        gens = backend.generate([r.request() for r in active], params)
        reads = [(run, frames) for run, gen in zip(active, gens) if (frames := run.advance(gen, tokenizer))]
        list(decode_pool().map(lambda job: job[0].read(job[1]), reads))


def _continuous(stream: Any, runs: Sequence[_Run], tokenizer: Any) -> None:
    """Each trajectory's next turn to the engine as soon as its clip is decoded (:func:`.schedule.continuous`)."""

    def submit(jobs: list[int]) -> None:
        stream.submit([(k, runs[k].request()) for k in jobs])

    def advance(finished: Sequence[tuple[int, Generation]]) -> dict[int, Future | None]:
        going: dict[int, Future | None] = {}
        for k, gen in finished:
            frames = runs[k].advance(gen, tokenizer)
            if not runs[k].trajectory.done:
                going[k] = decode_pool().submit(runs[k].read, frames) if frames else None
        return going

    for run in runs:
        run.schedule = "continuous"
    try:
        continuous(stream, [k for k, r in enumerate(runs) if not r.trajectory.done], submit, advance)
    finally:
        stream.close()
