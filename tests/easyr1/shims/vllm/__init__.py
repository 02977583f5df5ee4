"""Test-only import shim for vLLM: just the names EasyR1's modules import, so they can be imported on CPU.

Nothing here generates text; constructing ``LLM`` fails loudly. The tests' tiny HF engine is assigned to a
real ``vLLMRollout`` instead (see tests/easyr1/tiny_rollout.py).
"""

from dataclasses import dataclass
from typing import Any, Optional

__version__ = "0.0.0+test-shim"


class LLM:
    def __init__(self, model, *args, **kwargs):
        raise RuntimeError("vllm is a test import shim here: no engine can be built")


class RequestOutput:
    """vLLM's per-prompt result: ``outputs`` holds one completion per sample (``.token_ids``)."""

    def __init__(self, outputs):
        self.outputs = outputs


@dataclass
class SamplingParams:
    """The SamplingParams fields EasyR1 sets or overrides, and those a multi-turn rollout sets per round."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    seed: Optional[int] = None
    max_tokens: Optional[int] = 16
    ignore_eos: bool = False
    detokenize: bool = True
    logit_bias: Optional[dict[int, float]] = None
    stop_token_ids: Optional[list[int]] = None
    stop: Optional[list[str]] = None
    include_stop_str_in_output: bool = False
    logprobs: Optional[int] = None
    extra: Any = None


@dataclass
class Logprob:
    """vLLM's per-token log-prob record (``CompletionOutput.logprobs[i][token_id]``)."""

    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None
