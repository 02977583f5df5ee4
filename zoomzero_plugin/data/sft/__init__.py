"""VideoZoomer cold-start SFT data (``zoomzero data export-sft``): the OpenAI-compatible teacher client, the
trajectory sources (teacher, agent predictions, reflection), verifiers that replay every trajectory through the
agent environment, and the LLaMA-Factory sharegpt export checked with LLaMA-Factory's own code."""

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
