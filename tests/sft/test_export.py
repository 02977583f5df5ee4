"""`zoomzero data export-sft --format llamafactory`: sources, verifiers with reasons, the sample layout the
released model reads, LLaMA-Factory's own check, and nothing half-written."""

import json
from pathlib import Path

import numpy as np
from PIL import Image

from tests.sft.conftest import transcript, write_predictions
from tests.sft.helpers import ANSWER, CALL, ScriptedTeacher, user_text
from tests.sft.teacher_server import TeacherServer
from zoomzero_plugin.agent.prompts import PROMPTS, REFLECTION_SYSTEM
from zoomzero_plugin.commands.cli import main
from zoomzero_plugin.question import question_block

NATIVE_FPS, FRAMES = 4.0, 48  # the fixture videos: 12 s at 4 fps


def export(*args, out, data, check=True, model=None):
    argv = [
        "data",
        "export-sft",
        "--format",
        "llamafactory",
        "--data",
        str(data),
        "--out",
        str(out),
        "--no-progress",
        *map(str, args),
    ]
    argv += ["--model", str(model)] if check else ["--no-llamafactory-check"]
    return main(argv)


def rows_of(out: Path):
    return [json.loads(line) for line in (out / "videozoomer_sft.jsonl").read_text().splitlines()]


def clip_labels(start, end, fps):
    """The authors' clip rule, by hand: n = int(fps*(e-s)) frames over native indices int(s*F)..int(e*F), both
    ends included, labelled from 0 with absolute times."""
    n = int(fps * (end - start))
    idx = np.linspace(int(start * NATIVE_FPS), int(end * NATIVE_FPS), n).astype(int)
    return "".join(f"<frame{i}_time{j / NATIVE_FPS:.2f}s><image>" for i, j in enumerate(idx))


OVERVIEW = "".join(f"<frame{i}_time{2 * i:.2f}s><image>" for i in range(6))  # every 8th frame: 0, 8, …, 40


def test_teacher_export_keeps_verified_trajectories_in_the_released_layout(
    tmp_path, sft_rows, sft_truths, tiny_model_dir
):
    qids = list(sft_truths)
    teacher = ScriptedTeacher(sft_rows, wrong=[qids[1]], bad_call=[qids[2]])
    with TeacherServer(teacher) as server:
        code = export(
            "--source",
            "teacher",
            "--samples",
            2,
            "--teacher-url",
            server.url,
            "--teacher-model",
            "t",
            "--teacher-workers",
            2,
            out=tmp_path / "out",
            data=sft_rows,
            model=tiny_model_dir,
        )
    assert code == 0
    assert len(server.requests) == 12  # 3 questions x 2 samples x (call, answer)
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    # q0 twice right (the second identical: a duplicate); q1 twice wrong; q2 calls 40 frames twice
    assert summary["offered"] == {"teacher": 6} and summary["kept"] == {"teacher": 1}
    assert summary["dropped"] == {"broken_budget": 2, "duplicate": 1, "wrong_answer": 2}
    assert summary["check"]["llamafactory"] == "0.9.5" and summary["check"]["cutoff_len"] == 32768
    assert summary["teacher_requests"] == {"sent": 12, "replayed": 0}

    [row] = rows_of(out)
    truth, _ = sft_truths[qids[0]]
    s, e = (round(x, 1) for x in truth.spans[0])
    sft = PROMPTS["sft"]
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert row["messages"][0]["content"] == sft.system
    assert row["messages"][1]["content"] == OVERVIEW + question_block(truth.question, truth.options)
    assert row["messages"][2]["content"] == CALL % (s, e, 2)
    assert row["messages"][3]["content"] == sft.clip_open + clip_labels(s, e, 2) + sft.clip_close
    assert row["messages"][4]["content"] == ANSWER % truth.answer
    n_clip = int(2 * (e - s))
    assert len(row["images"]) == 6 + n_clip == sum(m["content"].count("<image>") for m in row["messages"])
    assert row["images"][0] == f"images/{row['id']}/000.png"
    for path in row["images"]:
        assert Image.open(out / path).size == (112, 84)
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["videozoomer_sft"]["file_name"] == "videozoomer_sft.jsonl"
    assert info["videozoomer_sft"]["formatting"] == "sharegpt"
    assert not list(tmp_path.glob(".out.partial-*"))

    # the teacher saw the same conversation, frames as data URLs in place of <image>
    second = [
        b
        for b in server.requests
        if question_block(truth.question, truth.options) in user_text(b) and len(b["messages"]) == 4
    ]
    assert len(second) == 2
    for body in second:
        assert body["messages"][0]["content"] == sft.system
        assert user_text(body).replace("<image>", "") == user_text(body)
        text = "".join(
            m["content"]
            if isinstance(m["content"], str)
            else "".join(p["text"] if p["type"] == "text" else "<image>" for p in m["content"])
            for m in body["messages"][1:]
        )
        assert text == "".join(m["content"] for m in row["messages"][1:4])
        urls = [
            p["image_url"]["url"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p["type"] == "image_url"
        ]
        assert len(urls) == len(row["images"]) and all(u.startswith("data:image/png;base64,") for u in urls)


def _predictions(tmp_path, sft_truths):
    (q0, (t0, v0)), (q1, (t1, v1)), (q2, (t2, v2)) = sft_truths.items()
    wrong = "A" if t1.answer != "A" else "B"
    good = transcript(v0, [CALL % (3.0, 5.0, 2), ANSWER % t0.answer])
    tampered = transcript(v2, [CALL % (3.0, 5.0, 2), ANSWER % t2.answer])
    tampered["turns"][0]["observation"] = tampered["turns"][0]["observation"].replace("time3.00s", "time3.10s")
    records = [
        {"qid": q0, "answer": t0.answer, "transcript": good},
        {"qid": q1, "answer": wrong, "transcript": transcript(v1, [CALL % (3.0, 5.0, 2), ANSWER % wrong])},
        {"qid": q2, "answer": None, "transcript": transcript(v2, ["I will not think.<answer>C</answer>"])},
        {"qid": q2, "answer": t2.answer, "transcript": tampered},
        {"qid": q2, "answer": None, "transcript": transcript(v2, [CALL % (3.0, 5.0, 2)] * 5)},
        {"qid": q1, "answer": t1.answer, "transcript": transcript(v1, [CALL % (0.0, 20.0, 1), ANSWER % t1.answer])},
    ]
    return write_predictions(tmp_path / "predictions.jsonl", records)


def test_predictions_are_rejection_sampled_with_reasons(tmp_path, sft_rows, sft_truths, tiny_model_dir):
    predictions = _predictions(tmp_path, sft_truths)
    out = tmp_path / "out"
    assert (
        export("--source", "predictions", "--predictions", predictions, out=out, data=sft_rows, model=tiny_model_dir)
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    # 5 calls in 5 rounds: the 5th call is in the last round -> broken budget; [0, 20] at 1 fps = 20 frames > 16
    assert summary["dropped"] == {"broken_budget": 2, "inconsistent": 1, "malformed_turn": 1, "wrong_answer": 1}
    [row] = rows_of(out)
    evaluation = PROMPTS["eval"]
    assert row["messages"][0]["content"] == evaluation.system  # each trajectory keeps the prompt it was made with
    assert row["messages"][3]["content"] == evaluation.clip_open + clip_labels(3.0, 5.0, 2) + evaluation.clip_close
    assert (
        "<frame0_time3.00s><image><frame1_time3.50s><image><frame2_time4.25s><image><frame3_time5.00s><image>"
        in row["messages"][3]["content"]
    )


def test_a_sample_over_the_cutoff_stops_the_export_naming_it_and_writes_nothing(
    tmp_path, sft_rows, sft_truths, tiny_model_dir, capsys
):
    predictions = _predictions(tmp_path, sft_truths)
    out = tmp_path / "out"
    code = export(
        "--source",
        "predictions",
        "--predictions",
        predictions,
        "--cutoff-len",
        300,
        out=out,
        data=sft_rows,
        model=tiny_model_dir,
    )
    err = capsys.readouterr().err
    assert code == 2
    q0 = next(iter(sft_truths))
    assert "exceed cutoff_len 300 with template qwen2_vl" in err and f"predictions-{q0}-0 (" in err
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))
    code = export(
        "--source",
        "predictions",
        "--predictions",
        predictions,
        "--cutoff-len",
        300,
        "--drop-long",
        out=out,
        data=sft_rows,
        model=tiny_model_dir,
    )
    assert code == 2 and "every sample exceeds the cutoff" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))


def test_reflection_continues_a_failed_trajectory_with_the_teachers_correction(
    tmp_path, sft_rows, sft_truths, tiny_model_dir
):
    (q0, (t0, v0)), (q1, (t1, v1)) = list(sft_truths.items())[:2]
    wrong = "A" if t1.answer != "A" else "B"
    failed = transcript(v1, [CALL % (0.0, 2.0, 2), ANSWER % wrong])
    predictions = write_predictions(
        tmp_path / "p.jsonl",
        [
            {"qid": q0, "answer": t0.answer, "transcript": transcript(v0, [CALL % (3.0, 5.0, 2), ANSWER % t0.answer])},
            {"qid": q1, "answer": wrong, "transcript": failed},
            {"qid": q1, "answer": wrong, "transcript": transcript(v1, [ANSWER % wrong])},  # no call: not eligible
        ],
    )
    fix = (
        '<think>The previous tool call was incorrect.</think><video_zoom>{"segment": [3.0, 5.0], "fps": 2}</video_zoom>'
    )

    def reply(body, n):
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        return fix if turns == 0 else ANSWER % t1.answer

    with TeacherServer(reply) as server:
        assert (
            export(
                "--source",
                "reflection",
                "--predictions",
                predictions,
                "--teacher-url",
                server.url,
                "--teacher-model",
                "t",
                out=tmp_path / "out",
                data=sft_rows,
                model=tiny_model_dir,
            )
            == 0
        )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["reflection_not_eligible"] == {"no_call": 1, "not_failed": 1}
    [row] = rows_of(tmp_path / "out")
    evaluation = PROMPTS["eval"]
    assert [m["role"] for m in row["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert row["messages"][2]["content"] == CALL % (0.0, 2.0, 2)  # the failed trajectory, its answer removed
    assert row["messages"][4]["content"] == fix
    assert row["messages"][5]["content"] == evaluation.clip_open + clip_labels(3.0, 5.0, 2) + evaluation.clip_close
    assert row["messages"][6]["content"] == ANSWER % t1.answer
    assert len(row["images"]) == 6 + 4 + 4
    first = server.requests[0]["messages"]
    assert first[0]["content"] == REFLECTION_SYSTEM
    text = user_text({"messages": first[1:]})
    assert text.startswith("user: \n<frame0_time0.00s>") and "assistant: \n" + CALL % (0.0, 2.0, 2) in text
    assert ANSWER % wrong not in text  # the teacher never sees the wrong answer turn


def test_usage_errors_are_one_line_before_any_work(tmp_path, sft_rows, capsys):
    assert export("--source", "teacher", out=tmp_path / "o", data=sft_rows, check=False) == 2
    assert "needs --teacher-url and --teacher-model" in capsys.readouterr().err
    assert export("--source", "predictions", out=tmp_path / "o", data=sft_rows, check=False) == 2
    assert "needs --predictions" in capsys.readouterr().err
    (tmp_path / "exists").mkdir()
    assert (
        export("--source", "predictions", "--predictions", "x", out=tmp_path / "exists", data=sft_rows, check=False)
        == 2
    )
    assert "exists; pass --overwrite" in capsys.readouterr().err
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
                "x",
                "--data",
                str(sft_rows),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "needs --model" in capsys.readouterr().err


def test_missing_video_is_named_before_any_request(tmp_path, sft_rows, capsys):
    rows = [json.loads(line) for line in open(sft_rows)]
    rows[1]["videos"] = [str(tmp_path / "gone.mp4")]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with TeacherServer(lambda body, n: "x") as server:
        assert (
            export(
                "--source",
                "teacher",
                "--teacher-url",
                server.url,
                "--teacher-model",
                "t",
                out=tmp_path / "o",
                data=data,
                check=False,
            )
            == 2
        )
    assert "gone.mp4" in capsys.readouterr().err and server.requests == []


def test_real_agent_evaluation_predictions_replay_consistently(tmp_path, sft_rows, sft_truths, tiny_model_dir):
    """`zoomzero eval --mode agent` (its real loop on the tiny model, words scripted) writes transcripts that the
    export's replay reproduces exactly: nothing is 'inconsistent'."""
    from tests.inference.conftest import ScriptedBackend
    from zoomzero_plugin.agent import AgentBudget
    from zoomzero_plugin.eval.runner import evaluate
    from zoomzero_plugin.inference.agent import AgentConfig
    from zoomzero_plugin.inference.hf_backend import TransformersBackend
    from zoomzero_plugin.inference.modes import ModeConfig
    from zoomzero_plugin.rows import read_rows

    rows = read_rows(sft_rows)
    (q0, (t0, _)), (q1, (t1, _)), (q2, (t2, _)) = sft_truths.items()
    said = {
        q0: [ANSWER % t0.answer],
        q1: [CALL % (2.0, 4.0, 2), ANSWER % t1.answer],
        q2: [CALL % (20.0, 22.0, 1), ANSWER % t2.answer],
    }  # 20 s lies outside a 12-s video

    def script(request, k):
        qid, round_ = request.tag.split("#")
        return said[qid][int(round_)]

    backend = ScriptedBackend(TransformersBackend(str(tiny_model_dir), device="cpu", batch_size=3), script)
    cfg = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=64)))
    evaluate(backend, rows, tmp_path / "run", benchmark="rows", mode="agent", cfg=cfg, batch_size=3, progress=False)
    out = tmp_path / "out"
    assert (
        export(
            "--source",
            "predictions",
            "--predictions",
            tmp_path / "run" / "predictions.jsonl",
            out=out,
            data=sft_rows,
            check=False,
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["offered"] == {"predictions": 3} and summary["kept"] == {"predictions": 2}
    assert summary["dropped"] == {"bad_call": 1}
    by_qid = {r["qid"]: r for r in rows_of(out)}
    assert by_qid[q1]["messages"][3]["content"] == (
        PROMPTS["eval"].clip_open + clip_labels(2.0, 4.0, 2) + PROMPTS["eval"].clip_close
    )


def _one_good_and_a_cut_line(path, sft_truths):
    (q0, (t0, v0)), (q1, (t1, v1)), _ = sft_truths.items()
    write_predictions(
        path,
        [{"qid": q0, "answer": t0.answer, "transcript": transcript(v0, [CALL % (3.0, 5.0, 2), ANSWER % t0.answer])}],
    )
    cut = json.dumps({"qid": q1, "answer": t1.answer, "transcript": transcript(v1, [ANSWER % t1.answer])})
    with open(path, "a", encoding="utf-8") as f:
        f.write(cut[: len(cut) // 2])  # a writer killed mid-line: no newline, not JSON
    return path


def test_a_cut_last_line_is_named_and_counted(tmp_path, sft_rows, sft_truths, capsys):
    def exported(predictions, out):
        assert export("--source", "predictions", "--predictions", predictions, out=out, data=sft_rows, check=False) == 0
        return capsys.readouterr().err

    handed = _one_good_and_a_cut_line(tmp_path / "mine.jsonl", sft_truths)
    assert (
        f"zoomzero data export-sft: warning: {handed}: its last line is cut short (no newline, not JSON): that "
        "line is skipped, 1 prediction(s) read"
    ) in exported(handed, tmp_path / "a")
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["cut_lines_skipped"] == {str(handed): 1} and summary["samples"] == 1

    run = tmp_path / "run"  # a `zoomzero eval` output folder: its run was killed while writing
    run.mkdir()
    (run / "run.json").write_text("{}")
    journal = _one_good_and_a_cut_line(run / "predictions.jsonl", sft_truths)
    err = exported(journal, tmp_path / "b")
    assert (
        f"{journal}: its last line is cut short (the run was killed while writing it): 1 prediction skipped, "
        "1 read; run the same `zoomzero eval` command again to finish it"
    ) in err


def test_predictions_without_predictions_are_named(tmp_path, sft_rows, capsys):
    for path, why in (
        ("/dev/null", "empty"),
        (tmp_path / "blank.jsonl", "empty"),
        (tmp_path / "cut.jsonl", "its only line is cut short"),
    ):
        if str(path).endswith("blank.jsonl"):
            path.write_text("\n\n")
        elif str(path).endswith("cut.jsonl"):
            path.write_text('{"qid": "q0", "ans')
        assert (
            export("--source", "predictions", "--predictions", path, out=tmp_path / "o", data=sft_rows, check=False)
            == 2
        )
        err = capsys.readouterr().err
        assert err == (
            f"zoomzero data export-sft: --predictions: {path}: holds no predictions ({why}); expected one "
            "JSON object per line\n"
        )
    assert (
        export("--source", "predictions", "--predictions", tmp_path, out=tmp_path / "o", data=sft_rows, check=False)
        == 2
    )
    assert f"{tmp_path} is a folder; give the predictions file" in capsys.readouterr().err
    assert (
        export(
            "--source",
            "predictions",
            "--predictions",
            tmp_path / "gone.jsonl",
            out=tmp_path / "o",
            data=sft_rows,
            check=False,
        )
        == 2
    )
    assert "predictions file not found" in capsys.readouterr().err


def test_no_tool_predictions_are_refused_for_sft(tmp_path, sft_rows, sft_truths, capsys):
    from zoomzero_plugin.agent.baseline import no_tool_transcript, video_frames
    from zoomzero_plugin.agent.frames import probe

    (q0, (t0, v0)), *_ = sft_truths.items()
    info = probe(v0)
    record = {
        "qid": q0,
        "answer": t0.answer,
        "transcript": no_tool_transcript(info, video_frames(info), t0.answer).to_dict(),
    }
    path = write_predictions(tmp_path / "p.jsonl", [record])
    assert export("--source", "predictions", "--predictions", path, out=tmp_path / "o", data=sft_rows, check=False) == 2
    assert "is the no-tool baseline's (`zoomzero eval --no-tool`)" in capsys.readouterr().err
