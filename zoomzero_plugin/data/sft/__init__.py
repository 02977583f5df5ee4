"""VideoZoomer cold-start SFT data (``zoomzero data export-sft``, :mod:`.export`): :mod:`.teacher` (the
OpenAI-compatible teacher client), :mod:`.sources` (trajectories from the teacher, agent predictions, reflection),
:mod:`.verify` (every trajectory replayed through the agent environment and judged), :mod:`.sharegpt` (a trajectory
as a LLaMA-Factory sharegpt sample) and :mod:`.llamafactory` (the export checked with LLaMA-Factory's own code).
"""

from .sharegpt import Sample, build_sample, dataset_info, structure_problems
from .teacher import TeacherClient, TeacherConfig, openai_messages
from .verify import REASONS, Verdict, judge, verify_transcript

__all__ = [
    "REASONS",
    "Sample",
    "TeacherClient",
    "TeacherConfig",
    "Verdict",
    "build_sample",
    "dataset_info",
    "judge",
    "openai_messages",
    "structure_problems",
    "verify_transcript",
]
