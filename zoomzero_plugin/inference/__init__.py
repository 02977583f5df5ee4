"""Inference over both methods: backends (transformers; vLLM when installed) behind one ``Backend`` protocol, and the
modes (one-stage, coarse-to-fine, divide-and-conquer, iterative zoom, and VideoZoomer's ``agent``). Names load their
modules on first use (the backends import torch)."""

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

__all__ = [
    "MODES",
    "AgentConfig",
    "Backend",
    "Generation",
    "ModeConfig",
    "ModeOutput",
    "Question",
    "Request",
    "SamplingParams",
    "ScriptedBackend",
    "TransformersBackend",
    "VLLMBackend",
    "answer_pass",
    "grounding_pass",
    "load_backend",
    "predict",
]
