"""Inference over both methods:

- :mod:`.backend` (the one ``Backend`` protocol, requests in, generations out): :mod:`.hf_backend` (transformers),
  :mod:`.vllm_backend` (vLLM, when installed), :mod:`.scripted` (a real backend whose words a script chooses);
- :mod:`.modes` (one-stage, coarse-to-fine, divide-and-conquer, iterative zoom) over :mod:`.passes` (one model pass
  over a zoom plan) with :mod:`.prompts` (prompts of passes over part of a video); :mod:`.agent` (VideoZoomer's
  ``agent`` mode); :mod:`.prediction` (what a mode returns per question);
- :mod:`.options` (the flags ``zoomzero eval`` and ``data filter`` share).

Names load their modules on first use (the backends import torch).
"""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(("Backend", "Generation", "Request", "SamplingParams", "load_backend"), "backend"),
    **dict.fromkeys(("MODES", "ModeConfig", "predict"), "modes"),
    **dict.fromkeys(("Question", "answer_pass", "grounding_pass"), "passes"),
    "AgentConfig": "agent",
    "ModeOutput": "prediction",
    "ScriptedBackend": "scripted",
    "TransformersBackend": "hf_backend",
    "VLLMBackend": "vllm_backend",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
