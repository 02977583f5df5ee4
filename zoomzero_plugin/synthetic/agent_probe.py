"""What a warm-started agent model does before RL: how often it writes a valid call, and how often it names the colour
of a one-square clip. Measured with transformers on the very prompts the VideoZoomer rollout renders.

RL can only teach where to look if a call on the evidence pays: the answer after a clip of one square must name that
square's colour reliably. :func:`probe_agent` measures both turns of the protocol on rows of
:func:`~.benchmark.make_grounding_task`:

- ``valid_calls``: the first turn sampled at temperature 1 (as RL samples it), the share that is a well-formed call
  the environment runs (frames returned), and which segments those calls ask for; of the others, how many are
  ``refused_calls`` (the call parsed, the environment refused its arguments: end not after start, over the frame
  budget) and how many malformed or not a call at all. RL soon unlearns refused segments; malformed turns (token
  slips of sampling at temperature 1) it did not reduce within 30 steps in the credit-assignment check's runs;
- ``perception``: for each row and each call :func:`~.warm_start.call_segments` teaches whose clip shows one square,
  the call teacher-forced, then the answer turn generated greedily and at temperature 1: the share that names the
  square's colour;
- ``answers_well_formed``: for each row and each run of consecutive parts (:func:`~.warm_start.tile_unions`: ``[0, 8]``,
  ``[4, 12]``, ``[0, 12]``… besides the parts, calls an agent taught the parts alone also writes), the call
  teacher-forced, then the answer turn sampled at temperature 1: the share that is one well-formed answer (what the
  reward's ``format`` asks of a final turn).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..agent import AgentBudget, Trajectory
from ..agent.frames import FrameReader
from ..agent.prompts import get_prompts, question_text
from ..agent.protocol import ANSWER, CALL, EXECUTION, parse_turn
from ..agent.render import QWEN_IMAGE, first_prompt, observation_text, prompt_text
from ..ground_truth import GroundTruth
from .benchmark import clip_letter
from .sft import generate_responses
from .warm_start import call_segments, call_turn, tile_unions


@dataclass
class AgentProbe:
    """Counts of :func:`probe_agent`: sampled first turns and their valid calls (by segment), one-square clips and
    the answers naming their colour (greedy, and sampled at temperature 1)."""

    first_turns: int = 0
    valid_calls: int = 0
    refused_calls: int = 0
    segments: Counter = field(default_factory=Counter)
    clips: int = 0
    named_greedy: int = 0
    named_sampled: int = 0
    answer_turns: int = 0
    answers_well_formed: int = 0

    def shares(self) -> dict[str, float | None]:
        """``valid_calls``, ``named_greedy``, ``named_sampled`` and ``answers_well_formed`` as shares (None where
        nothing was counted)."""
        share = lambda a, b: a / b if b else None  # noqa: E731
        return {
            "valid_calls": share(self.valid_calls, self.first_turns),
            "named_greedy": share(self.named_greedy, self.clips),
            "named_sampled": share(self.named_sampled, self.clips),
            "answers_well_formed": share(self.answers_well_formed, self.answer_turns),
        }

    def lines(self) -> list[str]:
        share = lambda a, b: f"{a}/{b} = {a / b:.0%}" if b else "–"  # noqa: E731
        called = ", ".join(f"[{s:g}, {e:g}] {n}" for (s, e), n in sorted(self.segments.items()))
        return [
            f"valid calls (first turn, temperature 1): {share(self.valid_calls, self.first_turns)}"
            f" ({called or 'none'}); refused {self.refused_calls}, malformed or no call"
            f" {self.first_turns - self.valid_calls - self.refused_calls}",
            f"colour of a one-square clip named (greedy): {share(self.named_greedy, self.clips)}",
            f"colour of a one-square clip named (temperature 1): {share(self.named_sampled, self.clips)}",
            "answer turn well-formed after a clip of any run of parts (temperature 1): "
            f"{share(self.answers_well_formed, self.answer_turns)}",
        ]


def _generate(model, processor, prompt: str, images: Sequence[Any], samples: int, greedy: bool, seed: int) -> list[str]:
    inputs = processor(text=[prompt], images=list(images) or None, return_tensors="pt")
    return [text for text, _ in generate_responses(model, processor, inputs, samples, greedy, seed, 48)]


def _clip_prompt(call: str, first: str, reader: FrameReader, budget: AgentBudget, prompts: Any, seen: Sequence[Any]):
    """``call`` run on a fresh trajectory: its observation, the prompt after its clip, and that prompt's images (the
    overview's ``seen``, then the clip's)."""
    observation = Trajectory(reader.info, budget, prompts).step(call).observation
    after = prompt_text(first, [(call, observation_text(observation))])
    clip = reader.read([f.frame for f in observation.frames], budget.max_frame_pixels, budget.min_frame_pixels)
    return observation, after, [*seen, *clip]


def probe_agent(
    model_dir: str | Path,
    rows: Sequence[Mapping[str, Any]],
    budget: AgentBudget,
    samples: int = 8,
    tile: bool = True,
    parts: int = 3,
    seed: int = 0,
    dense: bool = False,
) -> AgentProbe:
    """Probe the agent model in ``model_dir`` on ``rows`` (``make_grounding_task`` rows, with squares) under
    ``budget``: ``samples`` first turns per row at temperature 1, and one greedy and one sampled answer per one-square
    clip of :func:`~.warm_start.call_segments` (``parts``, ``tile``, ``dense``). See the module docstring."""
    import torch
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    processor = AutoProcessor.from_pretrained(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    prompts = get_prompts("train")
    probe = AgentProbe()
    rng = random.Random(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for row in rows:
            truth = GroundTruth.parse(row["answer"])
            reader = FrameReader(row["videos"][0])
            trajectory = Trajectory(reader.info, budget, prompts)
            first = first_prompt(
                processor.tokenizer.apply_chat_template,
                prompts.system,
                trajectory.user_parts(question_text(truth.question, truth.options)),
                QWEN_IMAGE,
            )
            seen = reader.read([f.frame for f in trajectory.overview], budget.max_frame_pixels, budget.min_frame_pixels)
            for text in _generate(model, processor, first, seen, samples, False, rng.randrange(1 << 30)):
                probe.first_turns += 1
                step = Trajectory(reader.info, budget, prompts).step(text)  # the turn as the environment parses it
                turn = step.turn
                if turn.kind == CALL and turn.format_ok and step.error is None and step.observation is not None:
                    probe.valid_calls += 1
                    probe.segments[(turn.call.start, turn.call.end)] += 1
                elif turn.kind == CALL and step.error is not None and step.error.kind == EXECUTION:
                    probe.refused_calls += 1  # parsed, its arguments refused
            clip_prompt = partial(_clip_prompt, first=first, reader=reader, budget=budget, prompts=prompts, seen=seen)
            for segment in call_segments(trajectory.video.duration, budget.max_frames_per_call, parts, tile, dense):
                observation, after, images = clip_prompt(call_turn(*segment))
                letter = clip_letter(row, truth, [f.time for f in observation.frames])
                if letter is None:
                    continue
                probe.clips += 1
                greedy = _generate(model, processor, after, images, 1, True, 0)[0]
                sampled = _generate(model, processor, after, images, 1, False, rng.randrange(1 << 30))[0]
                for text, attr in ((greedy, "named_greedy"), (sampled, "named_sampled")):
                    turn = parse_turn(text, budget.max_frames_per_call)
                    if turn.kind == ANSWER and turn.letter == letter:
                        setattr(probe, attr, getattr(probe, attr) + 1)
            if not tile:
                continue
            tiles = call_segments(trajectory.video.duration, budget.max_frames_per_call, parts, True, dense)
            for segment in tile_unions(tiles, budget.max_frames_per_call, dense):
                _, after, images = clip_prompt(call_turn(*segment))
                text = _generate(model, processor, after, images, 1, False, rng.randrange(1 << 30))[0]
                turn = parse_turn(text, budget.max_frames_per_call)
                probe.answer_turns += 1
                probe.answers_well_formed += turn.kind == ANSWER and turn.format_ok
    finally:
        torch.set_num_threads(threads)
    return probe
