"""``zoomzero demo --agent``: VideoZoomer's ``<video_zoom>`` loop with the tiny random model on a synthetic video.

The real agent mode (:mod:`zoomzero_plugin.inference.agent`) runs one question; the tiny model writes its
turns through :class:`~zoomzero_plugin.synthetic.template_sampler.TemplateAgentBackend` (a fixed plan of
turn kinds, every number and the letter sampled from the model): a call asking for too many frames (an
error turn), a call that returns a clip, then an answer. Prints the transcript, the budgets used and the
reward components of the whole trajectory.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np

from ..agent import AgentBudget, AgentRewardConfig, Transcript, score_response
from ..agent.frames import FrameReader
from ..agent.render import QWEN_IMAGE
from ..inference.agent import AgentConfig, agent_mode
from ..inference.modes import ModeConfig
from ..inference.passes import Question
from ..synthetic.template_sampler import ANSWER, CALL, WIDE_CALL, TemplateAgentBackend, TinyVideoLM
from ..synthetic.tiny_qwen import build_tiny_qwen
from ..synthetic.videos import COLORS, Evidence, dominant_color, write_video

DURATION, FPS, WIDTH, HEIGHT = 60.0, 2, 160, 120
TOOL_WEIGHT = 0.5  # shown switched on, so the demo prints the tool term (the authors' configs use 0)


def run_agent_demo(workdir: Path, seed: int = 0, temperature: float = 1.0, family: str = "qwen2_5_vl") -> None:
    t0 = time.perf_counter()
    rng = random.Random(seed)
    model_dir = workdir / f"tiny-{family}"
    if not (model_dir / "config.json").exists():
        build_tiny_qwen(model_dir, seed=seed, family=family)
    lm = TinyVideoLM.load(model_dir)
    options = rng.sample(sorted(COLORS), 4)
    letter = rng.randrange(4)
    start = float(rng.randrange(5, int(DURATION) - 10))
    video = write_video(
        workdir / "agent" / "long.mp4",
        duration=DURATION,
        fps=FPS,
        width=WIDTH,
        height=HEIGHT,
        evidence=[Evidence(start, start + 3.0, options[letter])],
    )
    question = Question(
        "agent-demo", str(video), "What colour is the square that appears in the video?", tuple(options), DURATION
    )
    budget = AgentBudget(max_new_tokens=128)
    backend = TemplateAgentBackend(lm, [WIDE_CALL, CALL, ANSWER], DURATION, "ABCD", rng, temperature=temperature)
    (prediction,) = agent_mode(backend, [question], ModeConfig(agent=AgentConfig(budget=budget)))
    transcript = Transcript.from_dict(prediction.record["transcript"])
    reader = FrameReader(str(video))

    print(
        f"Question: {question.question}  options: " + ", ".join(f"({label}) {o}" for label, o in zip("ABCD", options))
    )
    print(
        f"Truth: ({'ABCD'[letter]}), a {options[letter]} square from {start:g} s to {start + 3:g} s of a "
        f"{DURATION:g} s video ({reader.info.frames} frames at {reader.info.fps:g} fps)"
    )
    times = transcript.overview["times"]
    print(
        f"Overview: {len(times)} frames at {budget.overview_fps:g} fps, {times[0]:.2f} s … {times[-1]:.2f} s, "
        f"each shown as <frame{{i}}_time{{t:.2f}}s> + image\n"
    )
    for i, turn in enumerate(transcript.turns, 1):
        print(f"Turn {i} ({turn.tokens} tokens): {turn.text}")
        if turn.error:
            print(f"  -> error ({turn.error['code']}): {turn.error.get('note') or turn.error['message']}")
        if turn.clip:
            clip = reader.read(turn.clip["frames"], budget.max_frame_pixels, budget.min_frame_pixels)
            shown = [dominant_color(np.asarray(im)) or "-" for im in clip]
            print("  -> clip: " + ", ".join(f"{t:.2f} s [{c}]" for t, c in zip(turn.clip["times"], shown)))
        if turn.observation:
            preview = turn.observation.replace("\n", "\\n")
            print(f"  observation: {preview[:150]}{' …' if len(preview) > 150 else ''}")
    print(f"\nEnded: {transcript.end}; answer ({transcript.answer or '-'}); truth ({'ABCD'[letter]})")
    print(
        f"Budgets used: turns {transcript.rounds}/{budget.max_assistant_turns}, calls {transcript.calls}/"
        f"{budget.max_calls}, "
        f"error turns {transcript.errors}, images {transcript.images}/{budget.max_images} "
        f"({len(times)} overview + {transcript.clip_frames} clip), response tokens "
        f"{sum(t.tokens or 0 for t in transcript.turns)} generated"
    )
    config = AgentRewardConfig(tool=TOOL_WEIGHT)
    scores = score_response(transcript.response_text(QWEN_IMAGE), "ABCD"[letter], config)
    print(
        f"Reward: accuracy {scores['accuracy']:.0f}, format {scores['format']:.0f}, tool {scores['tool']:.0f} -> "
        f"overall {scores['overall']:.2f} = {config.accuracy:g}·acc + {config.format:g}·format + "
        f"{config.tool:g}·tool (the error turn's call asked for too many frames: no format point)"
    )
    print(f"Done in {time.perf_counter() - t0:.1f} s.")
