"""``lmms-eval --model zoomzero`` (its CLI and ``simple_evaluate``) gives what ``zoomzero eval`` gives on the same
questions: the same prediction records, and for this package's tasks the same official metrics."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lmms_eval.conftest import LMMS_TASKS, demo_args
from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.eval.predictions import read_predictions
from zoomzero_plugin.eval.runner import add_arguments, evaluate
from zoomzero_plugin.inference.hf_backend import TransformersBackend
from zoomzero_plugin.inference.options import mode_config, resolve
from zoomzero_plugin.inference.scripted import ScriptedBackend, template
from zoomzero_plugin.rows import read_rows, row_truth
from zoomzero_plugin.vision import DEFAULT_GEOMETRY

NEXTGQA_METRICS = ("Acc@QA", "Acc@GQA", "mIoP", "IoP@0.3", "IoP@0.5", "mIoU", "IoU@0.3", "IoU@0.5", "mIoG")
MCQ_TASKS = [f"{task}_synthetic" for task in LMMS_TASKS]


def lmms_eval(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "FORCE_QWENVL_VIDEO_READER": "decord",
        "OMP_NUM_THREADS": "1",
        "HF_HOME": str(cwd / "hf-home"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    command = [str(Path(sys.executable).parent / "lmms-eval"), *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def results_of(output: Path) -> dict:
    (path,) = output.rglob("*results*.json")
    return json.loads(path.read_text())["results"]


def zoomzero_eval(mode: str, benchmark: str, model, rows: Path, out: Path, *extra: str) -> list[dict]:
    assert (
        zoomzero(
            [
                "eval",
                "--demo",
                "--benchmark",
                benchmark,
                "--mode",
                mode,
                "--model",
                str(model),
                "--data",
                str(rows),
                "--out",
                str(out),
                "--no-progress",
                *extra,
            ]
        )
        == 0
    )
    return read_predictions(out / "predictions.jsonl")


def without_qid(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "qid"}


def test_the_demo_tasks_command_runs_coarse_to_fine_through_the_cli_as_zoomzero_eval(tmp_path, capsys):
    """`zoomzero lmms-eval tasks demo_tasks --demo`, then the lmms-eval command it prints, as printed."""
    assert zoomzero(["lmms-eval", "tasks", str(tmp_path / "demo_tasks"), "--demo"]) == 0
    printed = [line.strip() for line in capsys.readouterr().out.splitlines()]
    (command,) = [line for line in printed if line.startswith("lmms-eval ")]
    argv = shlex.split(command)
    assert argv[:3] == ["lmms-eval", "--model", "zoomzero"] and "mode=coarse-to-fine" in argv[4]
    records = tmp_path / "lmms-predictions.jsonl"
    argv[4] += f",predictions={records}"
    done = lmms_eval([*argv[1:], "--limit", "4", "--output_path", str(tmp_path / "out")], tmp_path)  # 4 of 8: CI time
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"\|nextgqa\|none\s*\|\s*0\|Acc@GQA", done.stdout)  # lmms-eval's table of the official metrics

    inputs = tmp_path / "demo_tasks" / "demo-inputs"
    expected = zoomzero_eval(
        "coarse-to-fine",
        "nextgqa",
        inputs / "tiny-qwen",
        inputs / "synthetic" / "rows.jsonl",
        tmp_path / "eval",
        "--limit",
        "4",
    )
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())["metrics"]
    assert len(expected) == 4 and read_predictions(records) == expected  # every pass, text and span, in order
    got = results_of(tmp_path / "out")["nextgqa"]
    assert {m: got[f"{m},none"] for m in NEXTGQA_METRICS} == {m: metrics[m] for m in NEXTGQA_METRICS}


def test_the_agent_on_lmms_evals_own_tasks_through_the_cli_equals_zoomzero_eval(synthetic, tiny_model_dir, tmp_path):
    expected = zoomzero_eval("agent", "longvideobench", tiny_model_dir, synthetic["rows"], tmp_path / "eval")
    records = tmp_path / "lmms-predictions.jsonl"
    args = f"{demo_args(tiny_model_dir)},mode=agent,predictions={records}"
    done = lmms_eval(
        [
            "--model",
            "zoomzero",
            "--model_args",
            args,
            "--tasks",
            ",".join(MCQ_TASKS),
            "--include_path",
            str(synthetic["tasks"]),
            "--output_path",
            str(tmp_path / "out"),
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    by_task: dict[str, list[dict]] = {}
    for record in read_predictions(records):  # qid: task/document
        by_task.setdefault(record["qid"].split("/")[0], []).append(record)
    assert sorted(by_task) == sorted(MCQ_TASKS)
    for task in MCQ_TASKS:  # the question and options read from each task's own prompt: the same trajectories
        got = sorted(by_task[task], key=lambda r: int(r["qid"].split("/")[1]))
        assert [without_qid(r) for r in got] == [without_qid(r) for r in expected], task
        assert all(r["transcript"]["turns"] for r in got)
    assert set(results_of(tmp_path / "out")) == set(MCQ_TASKS)  # each scored by lmms-eval's own code


def test_bad_model_args_end_with_one_line(synthetic, tiny_model_dir, tmp_path):
    done = lmms_eval(
        [
            "--model",
            "zoomzero",
            "--model_args",
            f"model={tiny_model_dir},mode=zoomy,agent_turns=3",
            "--tasks",
            "nextgqa",
            "--include_path",
            str(synthetic["tasks"]),
        ],
        tmp_path,
    )
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "lmms-eval --model zoomzero: mode=zoomy: choose from one-stage, coarse-to-fine, divide-and-conquer, "
        "iterative, agent; unknown 'agent_turns' (did you mean agent_temperature or agent_max_assistant_turns or "
        "agent_prompt?)"
    )


# --- simple_evaluate with scripted words: answers and spans chosen, everything else real ------------------------


def index_of(request) -> int:
    """Which synthetic question a request is about: its video (synth00K.mp4) or the agent's tag (qid#round)."""
    source = request.videos[0]["video"] if request.videos else request.tag.split("#")[0]
    return int(re.findall(r"\d+", Path(source).stem)[-1])


def scripted(tiny_model_dir, truths):
    """The tiny model, its words chosen. Coarse pass: question 0 cites its evidence exactly, 1 half of it shifted
    by half its length, 2 no span, 3 a span elsewhere. Fine pass: right for 0-2, wrong for 3. Agent: a zoom call,
    then right for 0 and 1, wrong for 2, no answer for 3."""

    def wrong(truth):
        return "A" if truth.answer != "A" else "B"

    def script(request, k):
        i = index_of(request)
        truth = truths[i]
        if request.images:  # the agent
            if request.tag.endswith("#0"):
                return '<think>look</think><video_zoom>{"segment": [2, 6], "fps": 1}</video_zoom>'
            return {
                0: f"<think>seen</think><answer>{truth.answer}</answer>",
                1: f"<think>seen</think><answer>{truth.answer}</answer>",
                2: f"<think>seen</think><answer>{wrong(truth)}</answer>",
                3: "<think>unsure</think>",
            }[i]
        if request.choices:
            return truth.answer if i < 3 else wrong(truth)
        (s, e), length = truth.spans[0], truth.spans[0][1] - truth.spans[0][0]
        spans = {0: [(s, e)], 1: [(s + length / 2, e + length / 2)], 2: [], 3: [(0.0, 0.4)]}[i]
        return template(truth.answer, spans)

    return ScriptedBackend(TransformersBackend(str(tiny_model_dir), device="cpu", batch_size=1), script)


def eval_config(mode: str, benchmark: str, geometry):
    """The config `zoomzero eval --demo --mode MODE --benchmark BENCHMARK` runs with."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--out", "x", "--demo", "--mode", mode, "--benchmark", benchmark])
    return mode_config(resolve(args, demo=True, benchmark=benchmark, geometry=geometry), geometry)


def test_simple_evaluate_with_scripted_answers_equals_zoomzero_eval_and_the_hand_count(
    synthetic, tiny_model_dir, tmp_path
):
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    from zoomzero_plugin.integrations.lmms_eval.model import ZoomZero

    rows = read_rows(synthetic["rows"])
    truths = [row_truth(r) for r in rows]
    backend = scripted(tiny_model_dir, truths)
    options = dict(item.split("=", 1) for item in demo_args(tiny_model_dir).split(","))
    manager = TaskManager("WARNING", include_path=str(synthetic["tasks"]))

    model = ZoomZero(loaded=backend, mode="coarse-to-fine", **options)
    lmms = simple_evaluate(model=model, tasks=["nextgqa"], task_manager=manager, verbosity="WARNING")["results"]
    lmms = lmms["nextgqa"]
    metrics = evaluate(
        backend,
        rows,
        tmp_path / "c2f",
        benchmark="nextgqa",
        mode="coarse-to-fine",
        cfg=eval_config("coarse-to-fine", "nextgqa", backend.geometry),
        progress=False,
    )
    # by hand: answers right for 0-2 (3 of 4); IoU 1, 1/3 (half the span, shifted by half), 0, 0; IoP 1, 1/2, 0, 0
    hand = {
        "Acc@QA": 75.0,
        "Acc@GQA": 50.0,
        "mIoU": 100 * (1 + 1 / 3) / 4,
        "mIoP": 37.5,
        "IoU@0.3": 50.0,
        "IoU@0.5": 25.0,
        "IoP@0.5": 50.0,
    }
    assert {m: lmms[f"{m},none"] for m in hand} == pytest.approx(hand)
    assert {m: lmms[f"{m},none"] for m in NEXTGQA_METRICS} == {m: metrics[m] for m in NEXTGQA_METRICS}

    model = ZoomZero(loaded=backend, mode="agent", **options)
    lmms = simple_evaluate(model=model, tasks=MCQ_TASKS, task_manager=manager, verbosity="WARNING")["results"]
    metrics = evaluate(
        backend,
        rows,
        tmp_path / "agent",
        benchmark="longvideobench",
        mode="agent",
        cfg=eval_config("agent", "longvideobench", backend.geometry),
        progress=False,
    )
    assert metrics["Acc"] == 50.0  # right for 0 and 1; no letter for 3 counts as wrong
    # lmms-eval's LongVideoBench draws a random letter for the reply without one: 1 chance in 4 of a third right one
    assert lmms["longvideobench_synthetic"]["lvb_acc,none"] in (0.5, 0.75)
    assert lmms["lvbench_synthetic"]["lvbench_score,none"] == 0.5  # a fraction; no letter: wrong
    assert lmms["videomme_synthetic"]["videomme_perception_score,none"] == 50.0  # a percentage; no letter: wrong
    # lmms-eval's MLVU (dev) averages the accuracy of all 7 task types, those without a question at 0: 50 / 7
    assert lmms["mlvu_synthetic"]["mlvu_percetion_score,none"] == pytest.approx(50 / 7)


@pytest.mark.parametrize("mode", ["one-stage", "divide-and-conquer", "iterative"])
def test_every_zoom_mode_on_an_lmms_eval_task_equals_zoomzero_eval(mode, synthetic, tiny_model_dir, tmp_path):
    """Video-MME's own prompt, read back into question and options, asks what the row asks."""
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.tasks import TaskManager

    from zoomzero_plugin.integrations.lmms_eval.model import ZoomZero

    options = dict(item.split("=", 1) for item in demo_args(tiny_model_dir).split(","))
    records = tmp_path / "lmms.jsonl"
    model = ZoomZero(mode=mode, predictions=str(records), **options)
    simple_evaluate(
        model=model,
        tasks=["videomme_synthetic"],
        verbosity="WARNING",
        limit=2,  # 2 of 4: CI time
        task_manager=TaskManager("WARNING", include_path=str(synthetic["tasks"])),
    )
    evaluate(
        model.backend,
        read_rows(synthetic["rows"])[:2],
        tmp_path / "eval",
        benchmark="videomme",
        mode=mode,
        cfg=eval_config(mode, "videomme", model.backend.geometry),
        progress=False,
    )
    expected = read_predictions(tmp_path / "eval" / "predictions.jsonl")
    assert len(expected) == 2
    assert [without_qid(r) for r in read_predictions(records)] == [without_qid(r) for r in expected]


def test_a_predictions_file_refuses_a_question_in_two_tasks_before_any_pass(synthetic, tmp_path):
    from types import SimpleNamespace

    from lmms_eval.api.instance import Instance

    from zoomzero_plugin.integrations.lmms_eval.model import ZoomZero

    row = read_rows(synthetic["rows"])[0]
    model = ZoomZero(
        loaded=SimpleNamespace(name="unused", geometry=DEFAULT_GEOMETRY), predictions=str(tmp_path / "p.jsonl")
    )
    model.task_dict = {"nextgqa": {"test": [row]}, "rextime": {"test": [row]}}
    requests = [
        Instance(
            request_type="generate_until",
            arguments=("", {}, None, 0, task, "test"),
            idx=0,
            metadata={"task": task, "doc_id": 0, "repeats": 1},
        )
        for task in ("nextgqa", "rextime")
    ]
    with pytest.raises(SystemExit) as e:
        model.generate_until(requests)
    assert str(e.value) == (
        f"lmms-eval --model zoomzero: predictions={tmp_path / 'p.jsonl'}: question synth000 is in "
        "the tasks nextgqa and rextime; run them one at a time"
    )
