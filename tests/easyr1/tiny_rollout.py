"""The one stand-in: EasyR1's rollout worker group, with vLLM's engine played by the tiny HF Qwen2.5-VL.

``TinyRolloutWorkerGroup.generate_sequences`` does what ``FSDPWorker.generate_sequences`` does per data-parallel
rank (eos/pad ids into meta_info, equal chunks per worker) and calls EasyR1's real
``vLLMRollout.generate_sequences``, which reads the videos with EasyR1's (patched) ``process_video`` and hands
the frames to ``inference_engine.generate``. That engine is :class:`TinyEngine`: the tiny random model run by
transformers on exactly those frames. A ``guide`` may force the tokens it emits (constrained decoding), so a
test gets known responses out of real forward passes.

Where vLLM is installed (``.venv-vllm``), tests/vllm run the same trainer path on EasyR1's real vLLMRollout and
vLLM's CPU engine. This stand-in remains for the tests here that need a chosen text per sample (exact rewards,
TokenAdv values, online filtering): EasyR1's rollout gives vLLM one SamplingParams for the whole batch, so a
real engine can be steered into the template (tests/vllm do) but not told what each sample says.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import torch

Guide = Callable[[str, torch.Tensor | None, int], str | None]  # (prompt text, frames, sample index) -> forced text


class TinyEngine:
    """Plays ``vllm.LLM.generate`` with the tiny HF model; records every prompt it was given."""

    def __init__(self, model: Any, processor: Any, guide: Guide | None = None):
        self.model, self.processor, self.tokenizer, self.guide = model, processor, processor.tokenizer, guide
        self.eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        vision = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>"]
        self.suppress = self.tokenizer.convert_tokens_to_ids(vision)
        self.calls: list[dict[str, Any]] = []

    def generate(self, prompts, sampling_params, use_tqdm=False, lora_request=None):
        from vllm import RequestOutput

        outputs = []
        for prompt in prompts:
            text = self.tokenizer.decode(prompt["prompt_token_ids"])
            video = (prompt.get("multi_modal_data") or {}).get("video")
            frames = video[0] if video else None
            if isinstance(frames, tuple):  # (frames, metadata): EasyR1 main with Qwen3-VL
                frames = frames[0]
            self.calls.append({"text": text, "frames": frames, "sampling": copy.copy(sampling_params)})
            inputs = self.processor(text=[text], videos=[frames] if frames is not None else None, return_tensors="pt")
            samples = []
            for k in range(sampling_params.n):
                target = self.guide(text, frames, k) if self.guide else None
                samples.append(SimpleNamespace(token_ids=self._generate(inputs, sampling_params, target)))
            outputs.append(RequestOutput(samples))
        return outputs

    def _generate(self, inputs, sampling_params, target: str | None) -> list[int]:
        prompt_len = inputs["input_ids"].shape[1]
        kwargs: dict[str, Any] = dict(
            max_new_tokens=sampling_params.max_tokens, eos_token_id=self.eos,
            pad_token_id=self.tokenizer.pad_token_id, suppress_tokens=self.suppress,
            do_sample=sampling_params.temperature > 0,
        )
        if kwargs["do_sample"]:
            kwargs["temperature"] = sampling_params.temperature
        if target is not None:
            forced = self.tokenizer.encode(target, add_special_tokens=False)[: sampling_params.max_tokens - 1] + [self.eos]
            kwargs["prefix_allowed_tokens_fn"] = lambda _, ids: [forced[min(len(ids) - prompt_len, len(forced) - 1)]]
        with torch.no_grad():
            out = self.model.generate(**inputs, **kwargs)
        return out[0, prompt_len:].tolist()


class TinyRolloutWorkerGroup:
    """``actor_rollout_ref_wg`` for ``_make_batch_data`` / ``_validate``: generation only."""

    def __init__(self, config: Any, tokenizer: Any, engine: TinyEngine, world_size: int = 2):
        from vllm import SamplingParams

        from verl.workers.rollout.vllm_rollout_spmd import _get_logit_bias, vLLMRollout

        rollout = vLLMRollout.__new__(vLLMRollout)  # its __init__ only builds the vLLM engine; we assign ours
        rollout.rank, rollout.config, rollout.use_tqdm = 0, config.worker.rollout, False
        rollout.pad_token_id = tokenizer.pad_token_id
        rollout.return_video_metadata, rollout.lora_kwargs = False, {}  # EasyR1 main's extra attributes
        rollout.inference_engine = engine
        sampling = {"max_tokens": config.worker.rollout.response_length, "detokenize": False,
                    "logit_bias": _get_logit_bias(engine.processor)}
        defaults = SamplingParams()
        sampling.update({k: v for k, v in config.worker.rollout.to_dict().items() if hasattr(defaults, k)})
        rollout.sampling_params = SamplingParams(**sampling)
        self.rollout, self.tokenizer, self.world_size = rollout, tokenizer, world_size
        self.batches: list[Any] = []  # every DataProto generate_sequences received

    def generate_sequences(self, prompts):
        from verl.protocol import DataProto

        self.batches.append(prompts)
        prompts.meta_info.update(eos_token_id=self.tokenizer.eos_token_id, pad_token_id=self.tokenizer.pad_token_id)
        chunks = prompts.chunk(self.world_size)  # Dispatch.DP_COMPUTE_PROTO: equal chunks, or it asserts
        return DataProto.concat([self.rollout.generate_sequences(c) for c in chunks])

    def prepare_rollout_engine(self):
        pass

    def release_rollout_engine(self):
        pass
