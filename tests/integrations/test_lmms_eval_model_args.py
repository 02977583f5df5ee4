"""lmms-eval's --model_args for the zoomzero model: zoomzero eval's options, names and defaults."""

from __future__ import annotations

import argparse

import pytest

from zoomzero_plugin.errors import UsageError
from zoomzero_plugin.eval.runner import add_arguments
from zoomzero_plugin.inference.options import resolve
from zoomzero_plugin.integrations.lmms_eval.model_args import benchmark_of, parse_model_args
from zoomzero_plugin.vision import VisionGeometry


def eval_values(argv: list[str], benchmark: str | None = None) -> dict:
    """What `zoomzero eval` resolves for these flags (its own parser)."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--out", "unused", *argv])
    return resolve(args, benchmark=benchmark or args.benchmark)


def test_defaults_are_the_papers_and_zoomzero_evals():
    args = parse_model_args({"model": "ckpt"})
    assert (args.model, args.mode, args.backend, args.batch_size, args.benchmark) == (
        "ckpt",
        "one-stage",
        "transformers",
        1,
        None,
    )
    short, long = args.values("nextgqa"), args.values("videomme")
    # the paper: 8,192 visual tokens at 1 fps for NExT-GQA, 16,384 for the long-video benchmarks; <=256 frames;
    # 256-s windows, top-4; responses <= 512 tokens; VideoZoomer: 5 assistant turns, 16 frames a call, 64-frame overview
    assert (short["max_visual_tokens"], long["max_visual_tokens"]) == (8192, 16384)
    assert (short["fps"], short["max_frames"]) == (1.0, 256)
    assert (short["window_seconds"], short["top_k"], short["max_new_tokens"]) == (256.0, 4, 512)
    assert (
        short["agent_max_assistant_turns"],
        short["agent_max_frames_per_call"],
        short["agent_max_overview_frames"],
    ) == (5, 16, 64)
    assert short == eval_values([], "nextgqa") and long == eval_values([], "videomme")


def test_values_are_read_as_zoomzero_eval_reads_its_flags():
    # as lmms-eval hands them over: "8192" -> int, "-2" -> float, "2.5" -> float, "iterative" -> str
    given = {
        "model": "ckpt",
        "mode": "iterative",
        "max_visual_tokens": 4096,
        "fps": 2,
        "min_shrink": 0.25,
        "agent-max-assistant-turns": 3,
        "window_times": "absolute",
        "benchmark": "lvbench",
    }
    args = parse_model_args(given)
    flags = [
        "--mode",
        "iterative",
        "--max-visual-tokens",
        "4096",
        "--fps",
        "2",
        "--min-shrink",
        "0.25",
        "--agent-max-assistant-turns",
        "3",
        "--window-times",
        "absolute",
        "--benchmark",
        "lvbench",
    ]
    assert args.values("nextgqa") == eval_values(flags)  # benchmark= wins over the task's
    assert args.values(None)["max_visual_tokens"] == 4096 and args.mode == "iterative"
    qwen3 = args.config("nextgqa", VisionGeometry(patch_size=16, merge_size=2, temporal_patch=2)).budget
    assert (qwen3.factor, qwen3.min_frame_pixels) == (32, 8 * 32 * 32 * 2)  # V_min = 8 tokens of 32-px tokens


def test_pretrained_is_lmms_evals_word_for_the_checkpoint():
    assert parse_model_args({"pretrained": "/ckpt"}).model == "/ckpt"
    with pytest.raises(UsageError, match="'model' given twice"):
        parse_model_args({"pretrained": "/a", "model": "/b"})


def test_lmms_evals_own_batch_size_and_device_apply_unless_given_here():
    args = parse_model_args({"model": "m"}, {"batch_size": "4", "device": "cuda:1", "max_batch_size": None})
    assert args.batch_size == 4 and args.backend_kwargs == {"device": "cuda:1", "dtype": "auto"}
    args = parse_model_args({"model": "m", "batch_size": 2, "device": "cpu"}, {"batch_size": "4", "device": "cuda"})
    assert args.batch_size == 2 and args.backend_kwargs["device"] == "cpu"
    with pytest.raises(UsageError, match=r"lmms-eval's --batch_size auto: expected an integer"):
        parse_model_args({"model": "m"}, {"batch_size": "auto"})
    with pytest.raises(UsageError, match="batch_size must be >= 1, got 0"):
        parse_model_args({"model": "m", "batch_size": 0})


def test_every_problem_is_named_at_once():
    with pytest.raises(UsageError) as e:
        parse_model_args({"mode": "zoomy", "max_visual_tokns": 5, "out": "x", "fps": "abc"})
    message = str(e.value)
    assert "mode=zoomy: choose from one-stage, coarse-to-fine, divide-and-conquer, iterative, agent" in message
    assert "unknown 'max_visual_tokns' (did you mean max_visual_tokens" in message
    assert "'out' is a `zoomzero eval` option not taken here: lmms-eval's --output_path" in message
    assert "fps=abc: expected a number" in message
    assert "model=CHECKPOINT is required" in message
    assert "\n" not in message


def test_ranges_are_checked_as_zoomzero_eval_checks_them_in_model_args_words():
    # lmms-eval turns "-5" into the float -5.0: it is read back as the integer -5, then found out of range
    with pytest.raises(UsageError) as e:
        parse_model_args({"model": "m", "max_visual_tokens": -5.0, "min_shrink": 2.0, "agent_temperature": -1})
    assert str(e.value).startswith("max_visual_tokens must be > 0, got -5; min_shrink must be in [0, 1), got 2.0")
    with pytest.raises(UsageError, match="max_frame_pixels .* must be >= min_frame_pixels"):
        parse_model_args({"model": "m", "min_frame_pixels": 1000, "max_frame_pixels": 999})
    with pytest.raises(UsageError, match="agent temperature must be >= 0"):
        parse_model_args({"model": "m", "agent_temperature": -1})


def test_a_task_gets_the_budget_of_the_benchmark_its_name_starts_with():
    assert [
        benchmark_of(t)
        for t in (
            "nextgqa",
            "cgbench_grounding",
            "longvideobench_val_v",
            "lvbench",
            "mlvu_dev",
            "videomme_w_subtitle",
            "mmmu_val",
        )
    ] == ["nextgqa", "cgbench", "longvideobench", "lvbench", "mlvu", "videomme", None]
    args = parse_model_args({"model": "m"})
    assert args.values(benchmark_of("cgbench_grounding"))["max_visual_tokens"] == 16384  # CG-Bench: long videos
    assert args.values(benchmark_of("mmmu_val"))["max_visual_tokens"] == 8192  # unknown: the short-video budget


def test_keys_are_read_without_the_spaces_around_them():
    # "model=m, mode=agent, fps=1" split at the commas only: the keys " mode" and " fps" are mode and fps
    args = parse_model_args({"model": "m", " mode": "agent", " fps ": 2})
    assert args.mode == "agent" and args.values("nextgqa")["fps"] == 2.0


def test_a_task_name_in_any_case_gets_its_benchmarks_budget():
    assert [benchmark_of(t) for t in ("NExTGQA_test", "LongVideoBench_val_v", "MLVU_dev", "CGBench")] == [
        "nextgqa",
        "longvideobench",
        "mlvu",
        "cgbench",
    ]


def test_benchmark_given_wins_over_the_tasks_own():
    # the paper's budgets: 8,192 visual tokens for NExT-GQA (short videos), 16,384 for the long-video benchmarks
    assert parse_model_args({"model": "m"}).values("lvbench")["max_visual_tokens"] == 16384  # the task's own
    assert parse_model_args({"model": "m", "benchmark": "nextgqa"}).values("lvbench")["max_visual_tokens"] == 8192
    assert parse_model_args({"model": "m", "benchmark": "lvbench"}).values("nextgqa")["max_visual_tokens"] == 16384
