"""Tests on the real lmms-eval (marker ``lmms_eval``): ``lmms-eval --model zoomzero`` on synthetic tasks.

They run where lmms-eval imports, i.e. in the environment of ``bash scripts/install-cpu.sh --lmms-eval``:
``.venv-lmms/bin/python -m pytest -m lmms_eval tests/lmms_eval``. Elsewhere they skip.

The synthetic benchmark (``zoomzero_plugin.synthetic.benchmark``: coloured squares at known seconds) serves every
task: as dataset rows for this package's ``nextgqa`` task, and as documents of lmms-eval's own LongVideoBench,
Video-MME, MLVU and LVBench tasks (their YAML files included as they ship, with the documents swapped for local ones).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from zoomzero_plugin.inference.options import DEMO_DEFAULTS
from zoomzero_plugin.integrations.lmms_eval.task_folder import write_tasks
from zoomzero_plugin.rows import read_rows, row_truth
from zoomzero_plugin.synthetic.benchmark import make_benchmark

SKIP = pytest.mark.skipif(
    importlib.util.find_spec("lmms_eval") is None,
    reason="lmms-eval is not installed here: run in .venv-lmms (bash scripts/install-cpu.sh --lmms-eval)",
)
# lmms-eval's own multiple-choice video tasks: the YAML shipped with it, and how a synthetic question becomes one
# of its documents (the fields its doc_to_text, doc_to_visual and process_results read)
LMMS_TASKS = {
    "longvideobench": "longvideobench/longvideobench_val_v.yaml",
    "videomme": "videomme/videomme.yaml",
    "mlvu": "mlvu/mlvu_dev.yaml",
    "lvbench": "lvbench/lvbench.yaml",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/lmms_eval/" in item.nodeid.replace(os.sep, "/"):
            item.add_marker(pytest.mark.lmms_eval)
            item.add_marker(SKIP)


def lmms_doc(task: str, k: int, row: dict) -> dict:
    truth = row_truth(row)
    video, letters = row["videos"][0], "ABCDE"[: len(truth.options)]
    if task == "longvideobench":
        options = {f"option{i}": truth.options[i] if i < len(truth.options) else "N/A" for i in range(5)}
        return {
            "id": truth.qid,
            "question": truth.question,
            **options,
            "correct_choice": letters.index(truth.answer),
            "duration_group": 15,
            "question_category": "synthetic",
            "video_path": video,
            "duration": truth.duration,
        }
    if task == "videomme":
        return {
            "videoID": video.removesuffix(".mp4"),
            "question_id": truth.qid,
            "question": truth.question,
            "options": [f"{L}. {o}" for L, o in zip(letters, truth.options)],
            "answer": truth.answer,
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Astronomy",
            "task_type": "Counting Problem",
        }
    lines = "\n".join(f"({L}) {o}" for L, o in zip(letters, truth.options))
    if task == "mlvu":
        return {
            "video_name": video,
            "question": f"{truth.question}\n{lines}",
            "answer": truth.answer,
            "task_type": "count",
        }
    return {
        "video_path": video,
        "uid": k,
        "question": truth.question,
        "options": list(truth.options),
        "answer": truth.answer,
    }


def lmms_task_yaml(task: str, docs: Path) -> str:
    import lmms_eval

    shipped = Path(lmms_eval.__file__).parent / "tasks" / LMMS_TASKS[task]
    return (
        f"include: {json.dumps(str(shipped))}\ntask: {task}_synthetic\ndataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(docs))}\ntest_split: test\n"
    )


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    """The synthetic benchmark's rows and a task folder: ``nextgqa`` over the rows, ``<task>_synthetic`` for each of
    lmms-eval's own tasks over the same questions."""
    root = tmp_path_factory.mktemp("lmms-synthetic")
    rows_path = make_benchmark(root / "bench", n_videos=4, seed=3)
    tasks = root / "tasks"
    write_tasks(tasks, {"nextgqa": rows_path})
    rows = read_rows(rows_path)
    for task in LMMS_TASKS:
        docs = root / f"{task}.jsonl"
        docs.write_text("".join(json.dumps(lmms_doc(task, k, row)) + "\n" for k, row in enumerate(rows)))
        (tasks / f"{task}_synthetic.yaml").write_text(lmms_task_yaml(task, docs))
    return {"rows": rows_path, "tasks": tasks, "root": root}


def demo_args(model_dir) -> str:
    """``--model_args`` with ``zoomzero eval --demo``'s small budgets (a CPU run in seconds)."""
    return ",".join([f"model={model_dir}", *(f"{k}={v}" for k, v in DEMO_DEFAULTS.items())])
