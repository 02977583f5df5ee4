"""Every place the host touches EasyR1, as a list.

Each seam names its target (``module`` + ``Class.attr`` or ``attr``), why it is wrapped, and what
breaks if EasyR1 changes it. Every wrapper calls EasyR1's original. Seams are applied when their module
is imported (:mod:`..post_import`, the table machinery in :mod:`..seams`), in every process where the plugins are
active; applying twice is a no-op. A missing target or a changed signature raises :class:`SeamError`, naming
``verl.__version__`` and the seam, so the run stops instead of silently training something else.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from ..seams import MARK, Seam, SeamError, SeamTable
from . import (
    advantage,
    batch_step,
    clips,
    dataset_videos,
    frame_refs,
    generation,
    loss_average,
    lr_schedule,
    metrics_file,
    multiturn,
    reward_extras,
    reward_names,
    sampler_check,
    vllm_engine,
)

__all__ = ["MARK", "SEAMS", "SUPPORTED", "TABLE", "Seam", "SeamError", "apply", "install", "status"]

SUPPORTED = "EasyR1 0.3.2 (lazyllm-verl 0.3.2.dev2) and 0.3.3.dev0 (main)"


def _reward_inputs(original: Callable) -> Callable:
    """Both reward-manager wrappers: the rollout hooks' extras, and the extent of multi-turn responses."""
    return reward_extras.wrap_compute_reward(multiturn.wrap_response_extent(original))


SEAMS: tuple[Seam, ...] = (
    Seam(
        name="reward_config.post_init",
        module="verl.workers.reward.config",
        targets=("RewardConfig.post_init",),
        params=("self",),
        wrap=reward_names.wrap_post_init,
        why="resolve plugin reward names (worker.reward.reward_function: zoomzero:gvqa) to a file path before "
        "EasyR1 checks that the file exists",
        breaks="named reward functions: EasyR1 would print 'Reward function … not found' and drop it",
    ),
    Seam(
        name="reward_manager.__init__",
        module="verl.workers.reward.function",
        targets=("FunctionRewardManager.__init__", "AutoRewardManager.__init__"),  # 0.3.2 | main
        params=("self", "config", "tokenizer"),
        wrap=reward_extras.wrap_manager_init,
        any_of=True,
        why="apply a reward name resolved by the driver's runtime-env hook; do not pass plugin option sections "
        "(zoom, tokenadv) to reward functions that do not declare them",
        breaks="named reward functions under `python3 -m verl.trainer.main` / `ray job submit`; custom reward "
        "functions in recipes that set plugin options",
    ),
    Seam(
        name="reward_manager.compute_reward",
        module="verl.workers.reward.function",
        targets=(
            "BatchFunctionRewardManager.compute_reward",  # 0.3.2
            "SequentialFunctionRewardManager.compute_reward",  # 0.3.2
            "AutoRewardManager.compute_reward",  # main
        ),
        params=("self", "data"),
        wrap=_reward_inputs,
        any_of=True,
        why="EasyR1 gives a reward function only response/response_length/ground_truth; rollout hooks' "
        "per-response extras (the zoom pass's answer) are merged into those inputs. EasyR1 measures a response "
        "by sum(response_mask): a multi-turn response (observation tokens masked out) is measured by its extent",
        breaks="the zoom reward (the host then stops: extras not delivered); multi-turn rewards (the decoded "
        "response would stop mid-exchange and the score land on an observation token)",
    ),
    Seam(
        name="dataset.process_image",
        module="verl.utils.dataset",
        targets=("process_image",),
        params=("image", "min_pixels", "max_pixels"),
        wrap=frame_refs.wrap_process_image,
        holders=("verl.workers.rollout.vllm_rollout_spmd", "verl.workers.fsdp_workers"),
        why="a multi_modal_data image may be a frame reference (video, frame group, index), decoded where EasyR1 "
        "reads images, so multi-turn batches carry no pixels through Ray",
        breaks="multi-turn video rollouts (workers would try to open a dict as image bytes)",
    ),
    Seam(
        name="dataset.RLHFDataset.__init__",
        module="verl.utils.dataset",
        targets=("RLHFDataset.__init__",),
        params=("self", "data_path", "tokenizer", "processor"),
        wrap=dataset_videos.wrap_dataset_init,
        why="EasyR1 main hands Qwen3-VL's processor a row's video frames without their metadata in the dataset (its "
        "rollout passes it): the processor then assumes 24 fps, samples the frames again and writes other timestamps; "
        "a Qwen3-VL processor gets each video's recorded metadata and do_sample_frames=False",
        breaks="Qwen3-VL video rows (the prompt's temporal patches and timestamps differ from the frames the actor and "
        "vLLM see: the actor's forward stops, or trains on other timestamps)",
    ),
    Seam(
        name="dataset.RLHFDataset.__getitem__",
        module="verl.utils.dataset",
        targets=("RLHFDataset.__getitem__",),
        params=("self", "index"),
        wrap=generation.wrap_dataset_getitem,
        why="EasyR1 sends generate_sequences only prompt ids and media; a plugin rollout's row fields (the "
        "VideoZoomer rollout reads the question and options of the ground truth) ride in multi_modal_data",
        breaks="plugin rollouts that need row fields (the VideoZoomer first prompt)",
    ),
    Seam(
        name="fsdp_workers.FSDPWorker.generate_sequences",
        module="verl.workers.fsdp_workers",
        targets=("FSDPWorker.generate_sequences",),
        params=("self", "prompts"),
        wrap=generation.wrap_generate_sequences,
        why="a plugin rollout (a multi-turn tool rollout) generates in place of vLLMRollout.generate_sequences, "
        "inside EasyR1's own generate_sequences (eos ids, tensor-parallel gather/scatter, copy to CPU)",
        breaks="plugin rollouts (the VideoZoomer agent's multi-turn RL)",
    ),
    Seam(
        name="fsdp_workers.FSDPWorker._process_multi_modal_inputs",
        module="verl.workers.fsdp_workers",
        targets=("FSDPWorker._process_multi_modal_inputs",),
        params=("self", "data"),
        wrap=multiturn.wrap_process_multi_modal_inputs,
        why="EasyR1 processes the media of one sample per uid and gives it to all n samples of a prompt; samples "
        "of a multi-turn rollout saw different clips, so their own media_uid is the key; a sample's images and "
        "videos are both processed, videos by the video processor as the engine did",
        breaks="multi-turn training (the actor would pair one sample's tokens with another sample's images)",
    ),
    Seam(
        name="vllm_rollout._process_multi_modal_data",
        module="verl.workers.rollout.vllm_rollout_spmd",
        targets=("_process_multi_modal_data",),
        params=("multi_modal_data", "min_pixels", "max_pixels", "video_fps"),
        wrap=multiturn.wrap_process_multi_modal_data,
        why="EasyR1 hands vLLM a prompt's images or its videos, never both; a multi-turn conversation whose clips "
        "are videos (after an image overview) needs both",
        breaks="clip_as: video in the multi-turn rollout (vLLM would see the overview images but not the clips)",
    ),
    Seam(
        name="dataset.process_video",
        module="verl.utils.dataset",
        targets=("process_video",),
        params=("video", "min_pixels", "max_pixels", "video_fps", "return_fps"),
        wrap=clips.wrap_process_video,
        holders=("verl.workers.rollout.vllm_rollout_spmd", "verl.workers.fsdp_workers"),
        why="a multi_modal_data video may be a clip spec (path + time ranges + frames + pixel limits), so "
        "rollout workers decode only the spans a zoom pass asks for; every decoded video's sample rate is "
        "recorded for the rollout engine (seam vllm_rollout.LLM)",
        breaks="the zoom pass (workers would try to open a dict as a path); the videos' true rates in vLLM",
    ),
    Seam(
        name="vllm_rollout.LLM",
        module="verl.workers.rollout.vllm_rollout_spmd",
        targets=("LLM",),
        params=(),  # the wrapper passes every argument through; it reads only the enable_sleep_mode keyword
        wrap=vllm_engine.wrap_llm,
        why="EasyR1 sends vLLM bare video frames without their rate, so vLLM assumes 2 fps and the rollout's "
        "temporal M-RoPE positions differ from the actor's: the engine passes each video's sample fps; on a "
        "platform without sleep mode (vLLM's CPU build) the engine is built without it and stays loaded",
        breaks="time encoding of videos not sampled at 2 fps during rollouts (silently); EasyR1 rollouts on a CPU",
    ),
    Seam(
        name="vllm_rollout._get_logit_bias",
        module="verl.workers.rollout.vllm_rollout_spmd",
        targets=("_get_logit_bias",),
        params=("processor",),
        wrap=vllm_engine.wrap_logit_bias,
        why="EasyR1 biases vLLM against sampling the image placeholder token but not the video one (its TODO); a "
        "sampled <|video_pad|> stops the actor's forward (video tokens and features differ)",
        breaks="video training whenever the policy samples <|video_pad|> (early in training, or a random model)",
    ),
    Seam(
        name="dp_actor.update_policy",
        module="verl.workers.actor.dp_actor",
        targets=("DataParallelPPOActor.update_policy",),
        params=("self", "data"),
        wrap=loss_average.wrap_update_policy,
        why="worker.actor.loss_avg_mode: seq averages each response's tokens, then the responses (Zoom-Zero Eq. 2, "
        "the authors' config); EasyR1 reweights every micro-batch by its token count, which makes seq the token mean",
        breaks="loss_avg_mode: seq silently trains with the token mean over the mini-batch",
    ),
    Seam(
        name="fsdp_workers.get_constant_schedule_with_warmup",
        module="verl.workers.fsdp_workers",
        targets=("get_constant_schedule_with_warmup",),
        params=("optimizer", "num_warmup_steps"),
        wrap=lr_schedule.wrap_constant_schedule,
        why="EasyR1 0.3.2 gives the first optimizer step a learning rate of 0 when no warmup is asked (fixed in "
        "main): constant from step 1, as the recipes say",
        breaks="step 1 of every v0.3.2 run trains nothing (lr 0)",
    ),
    Seam(
        name="ray_trainer.RayPPOTrainer.__init__",
        module="verl.trainer.ray_trainer",
        targets=("RayPPOTrainer.__init__",),
        params=("self", "config", "tokenizer", "processor", "train_dataloader", "val_dataloader"),
        wrap=advantage.wrap_trainer_init,
        why="plugin estimators (tokenadv) pass EasyR1's AdvantageEstimator enum check, validated as the "
        "built-in they resemble (grpo); plugin config checks run in the Runner before any worker starts",
        breaks="algorithm.adv_estimator: tokenadv (EasyR1 raises 'Unknown advantage estimator')",
    ),
    Seam(
        name="ray_trainer.compute_advantage",
        module="verl.trainer.ray_trainer",
        targets=("compute_advantage",),
        params=("data", "adv_estimator", "gamma", "lam"),
        wrap=advantage.wrap_compute_advantage,
        why="EasyR1 passes an estimator only token_level_rewards/response_mask/uid; plugin estimators get the "
        "whole batch (reward components, glue mask). fit() looks this global up at call time",
        breaks="tokenadv (compute_advantage_return would raise KeyError 'tokenadv')",
    ),
    Seam(
        name="ray_trainer.RayPPOTrainer._make_batch_data",
        module="verl.trainer.ray_trainer",
        targets=("RayPPOTrainer._make_batch_data",),
        params=("self", "metrics"),
        wrap=batch_step.wrap_make_batch_data,
        why="run rollout hooks while the rollout engine is loaded, then compute rewards once (token_level_scores, "
        "so fit() skips the reward actor) and keep per-response reward components for plugin estimators; seed each "
        "step's sampling with worker.rollout.seed + 1000 * step (EasyR1 gives every request of every step the same "
        "seed: the same random draws at each step)",
        breaks="rollout hooks (zoom pass) and tokenadv's reward components; fresh sampling noise per step",
    ),
    Seam(
        name="ray_trainer.RayPPOTrainer._validate",
        module="verl.trainer.ray_trainer",
        targets=("RayPPOTrainer._validate",),
        params=("self",),
        wrap=batch_step.wrap_validate,
        why="run rollout hooks on validation batches too, so validation reports the zoom reward and statistics",
        breaks="val/zoom_reward and val/zoom/* metrics",
    ),
    Seam(
        name="ray_trainer.compute_data_metrics",
        module="verl.trainer.ray_trainer",
        targets=("compute_data_metrics",),
        params=("batch",),
        wrap=sampler_check.wrap_compute_data_metrics,
        why="the sampler check: where a batch carries the sampler's log-probs (CPU mode; the VideoZoomer rollout "
        "with sampling_logprobs), log how far they are from the actor's (rollout/logprob_gap_*). fit() looks "
        "this global up at call time",
        breaks="the rollout/logprob_gap_* metrics (a broken weight sync would go unseen)",
    ),
    Seam(
        name="logger.Tracker.log",
        module="verl.utils.logger.logger",
        targets=("Tracker.log",),
        params=("self", "data", "step"),
        wrap=metrics_file.wrap_tracker_log,
        why="EASYR1_PLUGINS_METRICS_FILE (easyr1 train --metrics-file): every logged step also as a JSON line",
        breaks="--metrics-file (the file stays empty)",
    ),
)


TABLE = SeamTable(trainer="EasyR1", version_module="verl", supported=SUPPORTED, doctor="easyr1 doctor", seams=SEAMS)


def apply(seam: Seam, module: ModuleType) -> list[str]:
    """Wrap every present target of ``seam`` in ``module``; returns the targets (wrapped now or before)."""
    return TABLE.apply(seam, module)


def install() -> None:
    """Apply every seam now or when its module is imported (idempotent)."""
    TABLE.install()


def status(seam: Seam, import_modules: bool = False) -> tuple[str, str]:
    """(state, detail) for ``easyr1 doctor``: patched | unpatched | not imported | missing | import failed, or
    not needed (a seam whose module the installed EasyR1 does not have yet: :attr:`Seam.since`)."""
    return TABLE.status(seam, import_modules)
