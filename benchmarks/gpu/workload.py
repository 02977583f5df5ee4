"""The sizes of a GPU run and of its ``--tiny`` twin, and the two real model shapes.

The shapes are the public ``config.json`` values of Qwen/Qwen2.5-VL-7B-Instruct and Qwen/Qwen3-VL-8B-Instruct (the
sizes that set the compute and the memory; nothing is downloaded). The models keep the tiny tokenizer and the real
processors of :mod:`zoomzero_plugin.synthetic.tiny_qwen` (Qwen's own image and video processor classes, the released
checkpoints' patch sizes and pixel bounds), so a frame costs the visual tokens it costs the real model; the
embedding rows past the tiny vocabulary are unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Qwen/Qwen2.5-VL-7B-Instruct config.json (8.29 B parameters)
QWEN25_VL_7B: dict[str, dict[str, Any]] = {
    "text": dict(
        vocab_size=152064,
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        max_position_embeddings=128000,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]},
        tie_word_embeddings=False,
    ),
    "vision": dict(
        depth=32,
        hidden_size=1280,
        intermediate_size=3420,
        num_heads=16,
        out_hidden_size=3584,
        patch_size=14,
        spatial_merge_size=2,
        temporal_patch_size=2,
        window_size=112,
        fullatt_block_indexes=[7, 15, 23, 31],
        tokens_per_second=2,
        hidden_act="silu",
    ),
}

# Qwen/Qwen3-VL-8B-Instruct config.json (8.77 B parameters)
QWEN3_VL_8B: dict[str, dict[str, Any]] = {
    "text": dict(
        vocab_size=151936,
        hidden_size=4096,
        intermediate_size=12288,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=262144,
        rms_norm_eps=1e-6,
        rope_theta=5000000,
        rope_scaling={"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True},
        tie_word_embeddings=False,
    ),
    "vision": dict(
        depth=27,
        hidden_size=1152,
        intermediate_size=4304,
        num_heads=16,
        out_hidden_size=4096,
        patch_size=16,
        spatial_merge_size=2,
        temporal_patch_size=2,
        num_position_embeddings=2304,
        deepstack_visual_indexes=[8, 16, 24],
        hidden_act="gelu_pytorch_tanh",
    ),
}


@dataclass(frozen=True)
class Model:
    """One model of a run: its label, family (``tiny_qwen.FAMILIES``) and shape (None: the tiny sizes)."""

    label: str
    family: str
    shape: dict[str, dict[str, Any]] | None = None


@dataclass(frozen=True)
class Workload:
    """Every size of a run. Budgets not named here are the package's defaults (``ZoomBudget``, ``AgentBudget``)."""

    models: tuple[Model, ...]
    device: str
    dtype: str
    # synthetic videos (bench_inference.long_benchmark): questions, length, frame size, source rate, clue seconds
    questions: int
    seconds: float
    width: int
    height: int
    fps: int
    clue_seconds: float
    # zoomzero eval: L_v of every pass, window of divide-and-conquer, tokens a grounding pass / agent turn generates
    max_visual_tokens: int
    window_seconds: float
    max_new_tokens: int
    # the agent's calls: segment seconds (16 frames each: fps = 16 / seconds)
    call_seconds: float
    # training sequences: the Zoom-Zero coarse pass's L_v and response tokens; a VideoZoomer turn's think tokens
    train_visual_tokens: int
    train_response_tokens: int
    trajectory_think_tokens: int
    train_repeat: int
    # TokenAdv vs GRPO: responses x tokens, group size, timed repeats
    adv_responses: int
    adv_tokens: int
    adv_group: int
    adv_repeat: int
    budget_s: float  # sections not started by then are skipped (and listed)


GPU = Workload(
    models=(Model("Qwen2.5-VL-7B", "qwen2_5_vl", QWEN25_VL_7B), Model("Qwen3-VL-8B", "qwen3_vl", QWEN3_VL_8B)),
    device="cuda",
    dtype="bfloat16",
    questions=2,
    seconds=300.0,
    width=448,  # 112,896 px: agent frames are shrunk to its 100,352-px cap, as a real video's are
    height=252,
    fps=25,
    clue_seconds=10.0,
    max_visual_tokens=8192,  # the paper's L_v at 1 fps, <= 256 frames
    window_seconds=256.0,
    max_new_tokens=64,
    call_seconds=8.0,
    train_visual_tokens=16384,  # the paper's long-video budget
    train_response_tokens=512,  # the recipes' max_response_length
    trajectory_think_tokens=4000,  # about AgentBudget.max_new_tokens (4,096) a turn: the budget's longest trajectory
    train_repeat=2,
    adv_responses=512,
    adv_tokens=8192,
    adv_group=8,
    adv_repeat=20,
    budget_s=360.0,  # + the longest section (~1 min) stays inside the device call's 480 s
)

TINY = Workload(
    models=(Model("tiny Qwen2.5-VL", "qwen2_5_vl"), Model("tiny Qwen3-VL", "qwen3_vl")),
    device="cpu",
    dtype="float32",
    questions=2,
    seconds=20.0,
    width=112,  # small frames: the agent's 74 images stay small
    height=64,
    fps=8,
    clue_seconds=2.0,
    max_visual_tokens=128,
    window_seconds=8.0,
    max_new_tokens=8,
    call_seconds=2.0,
    train_visual_tokens=256,
    train_response_tokens=32,
    trajectory_think_tokens=24,
    train_repeat=1,
    adv_responses=16,
    adv_tokens=64,
    adv_group=8,
    adv_repeat=3,
    budget_s=600.0,
)
