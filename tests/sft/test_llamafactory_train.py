"""An exported dataset trained by LLaMA-Factory's own code: its loader and tokenizer put labels on the assistant
turns only, and `llamafactory-cli train` (the shipped recipe, CPU overrides) runs SFT steps with a falling loss."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.sft.conftest import transcript, write_predictions
from tests.sft.helpers import ANSWER, CALL
from zoomzero_plugin.commands.cli import main

REPO = Path(__file__).parents[2]
IGNORE = -100
# GPU-only or run-length keys of the recipe, replaced for a few CPU steps on the tiny model
CPU = {
    "bf16": False,
    "use_cpu": True,
    "flash_attn": "disabled",
    "max_steps": 6,
    "learning_rate": 1.0e-2,
    "lr_scheduler_type": "constant",
    "warmup_ratio": 0.0,
    "gradient_accumulation_steps": 1,
    "preprocessing_num_workers": 1,
    "dataloader_num_workers": 0,
    "save_strategy": "no",
    "plot_loss": False,
    "overwrite_cache": True,
    "trust_remote_code": False,
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory, sft_rows, sft_truths, tiny_model_dir):
    """Three verified two-turn trajectories (call, clip, answer), exported for LLaMA-Factory."""
    tmp = tmp_path_factory.mktemp("lf")
    records = [
        {"qid": q, "answer": t.answer, "transcript": transcript(v, [CALL % (3.0, 5.0, 2), ANSWER % t.answer])}
        for q, (t, v) in sft_truths.items()
    ]
    predictions = write_predictions(tmp / "predictions.jsonl", records)
    out = tmp / "dataset"
    assert (
        main(
            [
                "data",
                "export-sft",
                "--format",
                "llamafactory",
                "--source",
                "predictions",
                "--predictions",
                predictions,
                "--data",
                str(sft_rows),
                "--out",
                str(out),
                "--model",
                str(tiny_model_dir),
                "--no-progress",
            ]
        )
        == 0
    )
    return out


def recipe(model, dataset_dir, output_dir):
    values = yaml.safe_load((REPO / "yamls" / "videozoomer_sft.yaml").read_text(encoding="utf-8"))
    values.pop("deepspeed")  # ZeRO-3 needs GPUs
    return {
        **values,
        **CPU,
        "model_name_or_path": str(model),
        "dataset_dir": str(dataset_dir),
        "output_dir": str(output_dir),
    }


def runs(labels):
    """Contiguous runs of positions whose label is not ignored."""
    out, start = [], None
    for i, label in enumerate([*labels, IGNORE]):
        if label != IGNORE and start is None:
            start = i
        elif label == IGNORE and start is not None:
            out.append((start, i))
            start = None
    return out


def test_llamafactory_loads_the_export_and_labels_only_assistant_turns(exported, tiny_model_dir, tmp_path):
    from zoomzero_plugin.data.sft.llamafactory import _prepare_imports

    _prepare_imports()
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_tokenizer

    model_args, data_args, training_args, _, _ = get_train_args(recipe(tiny_model_dir, exported, tmp_path / "o"))
    modules = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(modules["tokenizer"], data_args)
    dataset = get_dataset(template, model_args, data_args, training_args, stage="sft", **modules)["train_dataset"]
    rows = [json.loads(line) for line in (exported / "videozoomer_sft.jsonl").read_text().splitlines()]
    assert len(dataset) == len(rows) == 3  # nothing dropped
    tok = modules["tokenizer"]
    pad = tok.convert_tokens_to_ids("<|image_pad|>")
    for row, sample in zip(rows, dataset):
        ids, labels = sample["input_ids"], sample["labels"]
        assert len(ids) == len(labels) <= data_args.cutoff_len
        assert ids.count(pad) > len(row["images"])  # every <image> expanded to its patch tokens
        assert all(label == IGNORE for i, label in zip(ids, labels) if i == pad)
        # the supervised spans are exactly the assistant turns, each closed by <|im_end|> and its newline
        spans = [tok.decode(ids[a:b]) for a, b in runs(labels)]
        assert spans == [m["content"] + "<|im_end|>\n" for m in row["messages"] if m["role"] == "assistant"]
        text = tok.decode(ids)
        assert text.count("<|im_start|>user\n") == 2 and "<tool_response>" in text  # the clip reply: a user turn
        assert all(labels[i] == ids[i] for a, b in runs(labels) for i in range(a, b))


QWEN3_RECIPE = REPO / "yamls" / "videozoomer_sft_qwen3vl.yaml"


def test_qwen3_vl_export_with_llamafactorys_qwen3_vl_template_labels_only_assistant_turns(
    sft_rows, sft_truths, tiny_qwen3_dir, tmp_path
):
    """The Qwen3-VL SFT recipe (LLaMA-Factory's own ``qwen3_vl`` template, a reasoning template, 32-px tokens) on
    the tiny Qwen3-VL: the export's check and LLaMA-Factory's own loader agree, labels fall on the assistant turns
    only (each opens with its own <think>…</think>, so the template adds no empty thought), and every 112x84 frame
    costs the tokens worked out by hand for patch 16 / merge 2."""
    from zoomzero_plugin.data.sft.llamafactory import _prepare_imports

    records = [
        {"qid": q, "answer": t.answer, "transcript": transcript(v, [CALL % (3.0, 5.0, 2), ANSWER % t.answer])}
        for q, (t, v) in sft_truths.items()
    ]
    out = tmp_path / "dataset"
    assert (
        main(
            [
                "data",
                "export-sft",
                "--format",
                "llamafactory",
                "--source",
                "predictions",
                "--predictions",
                write_predictions(tmp_path / "p.jsonl", records),
                "--data",
                str(sft_rows),
                "--out",
                str(out),
                "--recipe",
                str(QWEN3_RECIPE),
                "--model",
                str(tiny_qwen3_dir),
                "--max-frame-pixels",
                "131072",
                "--min-frame-pixels",
                "32768",
                "--no-progress",
            ]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["check"]["template"] == "qwen3_vl"

    _prepare_imports()
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_tokenizer

    values = yaml.safe_load(QWEN3_RECIPE.read_text(encoding="utf-8"))
    values.pop("deepspeed")
    args = {
        **values,
        **CPU,
        "model_name_or_path": str(tiny_qwen3_dir),
        "dataset_dir": str(out),
        "output_dir": str(tmp_path / "o"),
    }
    model_args, data_args, training_args, _, _ = get_train_args(args)
    assert data_args.template == "qwen3_vl"
    modules = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(modules["tokenizer"], data_args)
    dataset = get_dataset(template, model_args, data_args, training_args, stage="sft", **modules)["train_dataset"]
    rows = [json.loads(line) for line in (out / "videozoomer_sft.jsonl").read_text().splitlines()]
    assert len(dataset) == len(rows) == 3
    tok = modules["tokenizer"]
    pad = tok.convert_tokens_to_ids("<|image_pad|>")
    # a 112x84 frame, 9,408 px, within 4,096..131,072: not resized; the processor rounds each side to 32 px:
    # 84 -> 96 (2.625 -> 3 tokens), 112 -> 128 (3.5 -> 4, rounding half to even): 3 x 4 = 12 tokens a frame
    # (the same frame on Qwen2.5-VL's 28-px grid is 3 x 4 too, 84 x 112 exactly).
    for row, sample in zip(rows, dataset):
        ids, labels = sample["input_ids"], sample["labels"]
        assert ids.count(pad) == 12 * len(row["images"]) == 12 * (6 + 4)  # overview 6 frames + the 3-5 s clip at 2
        spans = [tok.decode(ids[a:b]) for a, b in runs(labels)]
        assert spans == [m["content"] + "<|im_end|>\n" for m in row["messages"] if m["role"] == "assistant"]
        assert all(m["content"].startswith("<think>") for m in row["messages"] if m["role"] == "assistant")
        assert all(labels[i] == ids[i] for a, b in runs(labels) for i in range(a, b))


def test_llamafactory_cli_trains_the_recipe_on_the_export(exported, tiny_model_dir, tmp_path):
    out = tmp_path / "run"
    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump(recipe(tiny_model_dir, exported, out)))
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "DISABLE_VERSION_CHECK": "0",
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "startup"), str(REPO)]),
    }
    cli = Path(sys.executable).with_name("llamafactory-cli")
    done = subprocess.run([str(cli), "train", str(config)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    log = [json.loads(line) for line in (out / "trainer_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in log if "loss" in r]
    assert len(losses) == CPU["max_steps"]
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0]
    assert (out / "model.safetensors").is_file()


def documented_cpu_command() -> list[str]:
    """The CPU command of docs/videozoomer-sft.md, as the shell splits it."""
    import re
    import shlex

    text = (REPO / "docs" / "videozoomer-sft.md").read_text(encoding="utf-8").replace("\\\n", " ")
    [line] = [c for c in re.findall(r"^llamafactory-cli train .*$", text, re.MULTILINE) if "use_cpu=true" in c]
    return shlex.split(line)


def _train(argv, tmp_path):
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "startup"), str(REPO)]),
    }
    cli = Path(sys.executable).with_name("llamafactory-cli")
    return subprocess.run(
        [str(cli), *argv[1:]], env=env, capture_output=True, text=True, timeout=600, cwd=REPO, check=False
    )


def test_the_documented_cpu_command_trains(exported, tiny_model_dir, tmp_path):
    """The docs' overrides, as written, with the tiny model and the export in place of the paths."""
    argv = documented_cpu_command()
    assert argv[:3] == ["llamafactory-cli", "train", "yamls/videozoomer_sft.yaml"]
    assert "save_strategy='no'" in argv  # the shell removed the outer quotes only
    paths = {"dataset_dir": exported, "model_name_or_path": tiny_model_dir, "output_dir": tmp_path / "run"}
    given = {a.split("=", 1)[0] for a in argv[3:]}
    assert set(paths) <= given
    argv = [a if a.split("=", 1)[0] not in paths else f"{a.split('=', 1)[0]}={paths[a.split('=', 1)[0]]}" for a in argv]
    done = _train(argv, tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    log = [json.loads(line) for line in (tmp_path / "run" / "trainer_log.jsonl").read_text().splitlines()]
    assert [r for r in log if "loss" in r] and all(math.isfinite(r["loss"]) for r in log if "loss" in r)
    assert (tmp_path / "run" / "model.safetensors").is_file()  # saved at the end
    assert not list((tmp_path / "run").glob("checkpoint-*"))  # and never during the run

    # the bare word is the trap the docs warn about: OmegaConf reads it as False
    unquoted = [("save_strategy=no" if a == "save_strategy='no'" else a) for a in argv]
    done = _train(unquoted, tmp_path)
    assert done.returncode != 0 and "False is not a valid SaveStrategy" in done.stderr
