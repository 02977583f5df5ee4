"""The one stand-in: EasyR1's rollout worker group, with vLLM's engine played by the tiny HF Qwen2.5-VL.

``TinyRolloutWorkerGroup.generate_sequences`` splits a batch into equal chunks per data-parallel rank (as EasyR1's
``Dispatch.DP_COMPUTE_PROTO`` does) and runs EasyR1's real ``FSDPWorker.generate_sequences`` on each (end-of-sequence
ids into ``meta_info``, the rollout, the copy to CPU; the plugins' wrapper routes a plugin rollout), on a worker
that holds only what generation needs: the tokenizer, the processor and EasyR1's real ``vLLMRollout``, whose
``generate_sequences`` reads the media with EasyR1's (patched) ``process_image``/``process_video`` and hands them to
``inference_engine.generate``. That engine is :class:`TinyEngine`: the tiny random model run by transformers on
exactly those inputs. It honours what vLLM's ``SamplingParams`` ask for here (``n``, ``temperature``,
``max_tokens``, ``stop`` strings, ``logprobs``), and a ``guide`` may force the tokens it emits (constrained
decoding), so a test gets known responses out of real forward passes.

Where vLLM is installed (``.venv-vllm``), tests/vllm run the same trainer path on EasyR1's real vLLMRollout and
vLLM's CPU engine. This stand-in remains for the tests here that need a chosen text per sample (exact rewards,
TokenAdv values, online filtering, the multi-turn rollout's scripted trajectories): EasyR1's rollout gives vLLM
one SamplingParams for the whole batch, so a real engine can be steered into the template (tests/vllm do) but not
told what each sample says.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import torch

Guide = Callable[[str, Any, int], str | None]  # (prompt text, frames or images, sample index) -> forced text


class TinyEngine:
    """Plays ``vllm.LLM.generate`` with the tiny HF model; records every prompt it was given.

    ``logprobs`` are the model's raw log-softmax at each sampled token (vLLM's default ``raw_logprobs``), taken
    from the same forward passes that chose the tokens.
    """

    def __init__(self, model: Any, processor: Any, guide: Guide | None = None):
        self.model, self.processor, self.tokenizer, self.guide = model, processor, processor.tokenizer, guide
        self.eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        vision = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>"]
        self.suppress = self.tokenizer.convert_tokens_to_ids(vision)
        self.calls: list[dict[str, Any]] = []  # one per prompt
        self.generations: list[int] = []  # one per engine call: how many prompts it held

    def generate(self, prompts, sampling_params, use_tqdm=False, lora_request=None):
        from vllm import Logprob, RequestOutput

        from zoomzero_plugin.hosts.easyr1.vllm_engine import with_sample_fps

        self.generations.append(len(prompts))
        outputs = []
        per_prompt = sampling_params if isinstance(sampling_params, (list, tuple)) else [sampling_params] * len(prompts)
        for prompt, sampling_params in zip(with_sample_fps(list(prompts)), per_prompt):  # as the host's LLM sends them
            text = self.tokenizer.decode(prompt["prompt_token_ids"])
            media = prompt.get("multi_modal_data") or {}
            video, images = media.get("video"), media.get("image")
            frames = video[0] if video else None
            if isinstance(frames, tuple):  # (frames, metadata): EasyR1 main with Qwen3-VL
                frames = frames[0]
            self.calls.append(
                {
                    "text": text,
                    "frames": frames,
                    "images": images,
                    "videos": video,
                    "sampling": copy.copy(sampling_params),
                    "mm_processor_kwargs": dict(prompt.get("mm_processor_kwargs") or {}),
                }
            )
            if images and video:  # a multi-turn conversation whose clips are videos: vLLM's token-level expansion
                inputs = self._clip_inputs(prompt, images, video)
            else:
                inputs = self.processor(
                    text=[text],
                    videos=[frames] if frames is not None else None,
                    images=images or None,
                    return_tensors="pt",
                )
            samples = []
            for k in range(sampling_params.n):
                target = self.guide(text, images if images else frames, k) if self.guide else None
                ids, logprobs = self._generate(inputs, sampling_params, target)
                steps = (
                    [{t: Logprob(lp)} for t, lp in zip(ids, logprobs)] if sampling_params.logprobs is not None else None
                )
                samples.append(SimpleNamespace(token_ids=ids, logprobs=steps))
            outputs.append(RequestOutput(samples))
        return outputs

    def _clip_inputs(self, prompt, images, videos):
        """Model inputs of a prompt with images and clip videos, as vLLM builds them from token ids: each image pad
        repeated for its grid, and each video placeholder replaced by what the processor makes of that video alone
        (Qwen3-VL: its timestamps then frame blocks; Qwen2.5-VL: its pads); pixels and grids from the processor,
        videos timed by their metadata and, for Qwen2.5-VL, the recorded rates (``mm_processor_kwargs["fps"]``)."""
        fps = (prompt.get("mm_processor_kwargs") or {}).get("fps")
        fps = [fps] if isinstance(fps, (int, float)) else fps
        frames = [v[0] if isinstance(v, tuple) else v for v in videos]
        metadata = [v[1] if isinstance(v, tuple) else None for v in videos]
        tok = self.tokenizer
        placeholder = tok.encode("<|vision_start|><|video_pad|><|vision_end|>", add_special_tokens=False)
        per_video, extra = [], {}
        for k, (f, m) in enumerate(zip(frames, metadata)):
            kwargs = {"video_metadata": [m]} if m is not None else {}
            if fps is not None:
                kwargs["fps"] = [fps[k]]
            out = self.processor(
                text=[tok.decode(placeholder)], videos=[f], do_sample_frames=False, return_tensors="pt", **kwargs
            )
            per_video.append(out["input_ids"][0].tolist())
            for key in ("pixel_values_videos", "video_grid_thw", "second_per_grid_ts"):
                if key in out:
                    extra.setdefault(key, []).append(out[key])
        image_out = self.processor.image_processor(images=images, return_tensors="pt")
        merge = self.processor.image_processor.merge_size**2
        sizes = iter((image_out["image_grid_thw"].prod(-1) // merge).tolist())
        raw, ids, i = list(prompt["prompt_token_ids"]), [], 0
        image_pad = tok.convert_tokens_to_ids("<|image_pad|>")
        videos_left = iter(per_video)
        while i < len(raw):
            if raw[i : i + len(placeholder)] == placeholder:
                ids += next(videos_left)
                i += len(placeholder)
            else:
                ids += [raw[i]] * (next(sizes) if raw[i] == image_pad else 1)
                i += 1
        inputs = {
            "input_ids": torch.tensor([ids]),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.long),
            **dict(image_out),
            **{key: torch.cat(value) for key, value in extra.items()},
        }
        return inputs

    def _generate(self, inputs, sampling_params, target: str | None) -> tuple[list[int], list[float]]:
        prompt_len = inputs["input_ids"].shape[1]
        kwargs: dict[str, Any] = dict(
            max_new_tokens=sampling_params.max_tokens,
            eos_token_id=self.eos,
            pad_token_id=self.tokenizer.pad_token_id,
            suppress_tokens=self.suppress,
            do_sample=sampling_params.temperature > 0,
            output_logits=True,
            return_dict_in_generate=True,
        )
        if kwargs["do_sample"]:
            kwargs["temperature"] = sampling_params.temperature
        if target is not None:
            forced = self.tokenizer.encode(target, add_special_tokens=False)[: sampling_params.max_tokens - 1] + [
                self.eos
            ]
            kwargs["prefix_allowed_tokens_fn"] = lambda _, ids: [forced[min(len(ids) - prompt_len, len(forced) - 1)]]
        with torch.no_grad():
            out = self.model.generate(**inputs, **kwargs)
        ids = out.sequences[0, prompt_len:].tolist()
        raw = torch.stack([step[0] for step in out.logits]).float().log_softmax(-1)  # (steps, vocab)
        logprobs = raw[torch.arange(len(ids)), torch.tensor(ids)].tolist()
        cut = self._stop(ids, getattr(sampling_params, "stop", None) or [])
        return ids[:cut], logprobs[:cut]

    def _stop(self, ids: list[int], stops: list[str]) -> int:
        """Tokens kept when generation stops at the first stop string (kept in the output, as EasyR1's rollout
        asks with ``include_stop_str_in_output``); generation is autoregressive, so cutting afterwards is the same."""
        if self.eos in ids:
            ids = ids[: ids.index(self.eos) + 1]
        if stops:
            for k in range(1, len(ids) + 1):
                if any(s in self.tokenizer.decode(ids[:k]) for s in stops):
                    return k
        return len(ids)


class _IdentitySharding:
    """The sharding manager of a rank with no tensor parallelism: data passes through."""

    def preprocess_data(self, data):
        return data

    def postprocess_data(self, data):
        return data


class TinyRolloutWorkerGroup:
    """``actor_rollout_ref_wg`` for ``_make_batch_data`` / ``_validate``: generation only."""

    def __init__(self, config: Any, tokenizer: Any, engine: TinyEngine, world_size: int = 2):
        from verl.workers.rollout.vllm_rollout_spmd import _get_logit_bias, vLLMRollout
        from vllm import SamplingParams

        rollout = vLLMRollout.__new__(vLLMRollout)  # its __init__ only builds the vLLM engine; we assign ours
        rollout.rank, rollout.config, rollout.use_tqdm = 0, config.worker.rollout, False
        rollout.pad_token_id = tokenizer.pad_token_id
        rollout.return_video_metadata, rollout.lora_kwargs = False, {}  # EasyR1 main's extra attributes
        rollout.inference_engine = engine
        sampling = {
            "max_tokens": config.worker.rollout.response_length,
            "detokenize": False,
            "logit_bias": _get_logit_bias(engine.processor),
        }
        defaults = SamplingParams()
        sampling.update({k: v for k, v in config.worker.rollout.to_dict().items() if hasattr(defaults, k)})
        rollout.sampling_params = SamplingParams(**sampling)
        self.worker = SimpleNamespace(  # an FSDPWorker as far as generate_sequences reads it
            _has_rollout=True,
            generation_config=None,
            tokenizer=tokenizer,
            processor=engine.processor,
            rollout=rollout,
            rollout_sharding_manager=_IdentitySharding(),
        )
        self.rollout, self.tokenizer, self.world_size = rollout, tokenizer, world_size
        self.batches: list[Any] = []  # every DataProto generate_sequences received

    def generate_sequences(self, prompts):
        from verl.protocol import DataProto
        from verl.workers.fsdp_workers import FSDPWorker

        self.batches.append(prompts)
        chunks = prompts.chunk(self.world_size)  # Dispatch.DP_COMPUTE_PROTO: equal chunks, or it asserts
        return DataProto.concat([FSDPWorker.generate_sequences(self.worker, c) for c in chunks])

    def prepare_rollout_engine(self):
        pass

    def release_rollout_engine(self):
        pass
