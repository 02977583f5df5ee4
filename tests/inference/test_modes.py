from dataclasses import replace

import pytest

from zoomzero_plugin.inference.modes import ModeConfig, predict, windows
from zoomzero_plugin.inference.passes import Question
from zoomzero_plugin.rows import read_rows

from ..conftest import EVIDENCE_DURATION
from .conftest import SMALL, ScriptedBackend, grounded

CFG = ModeConfig(budget=SMALL, max_new_tokens=16, window_seconds=4.0, top_k=2)


@pytest.fixture
def questions(evidence_video):
    return [
        Question(f"q{i}", str(evidence_video), "What colour?", ("red", "blue", "green"), EVIDENCE_DURATION)
        for i in range(2)
    ]


def _is_coarse(request):
    return not request.choices and "This video in total has 12.0 seconds" in request.prompt


def _inside(decoded, spans):
    """Every decoded clip's frames lie inside one of ``spans``."""
    return all(any(s - 1e-6 <= first <= last <= e + 1e-6 for s, e in spans) for _, _, _, first, last, _, _ in decoded)


def test_coarse_to_fine_reads_the_predicted_spans_under_the_same_budget(tiny_backend, questions):
    # q0 grounds two spans; q1 (the second coarse request) gives an answer and no spans
    texts = iter([grounded("B", [(3.0, 5.0), (8.0, 9.5)]), "<answer>C</answer>"])
    backend = ScriptedBackend(tiny_backend, lambda r, k: next(texts) if _is_coarse(r) else None)
    p0, p1 = predict(backend, questions, "coarse-to-fine", CFG)
    coarse, fine = p0.record["passes"]
    assert coarse["spans"] == [[3.0, 5.0], [8.0, 9.5]] and p0.record["spans"] == coarse["spans"]
    assert fine["pass"] == "fine" and [c[:2] for c in fine["clips"]] == [[3.0, 5.0], [8.0, 9.5]]
    assert _inside(fine["decoded"], [(3.0, 5.0), (8.0, 9.5)])
    assert coarse["video_tokens"] <= SMALL.max_visual_tokens and fine["video_tokens"] <= SMALL.max_visual_tokens
    assert fine["frame_pixels"] > coarse["frame_pixels"]
    assert fine["frames"] < coarse["frames"]
    assert p0.record["answer"] == fine["answer"] in "ABC" and p0.record["fallback"] is None
    assert p0.record["confidence"] == fine["confidence"] and 0 < fine["confidence"] <= 1
    # no valid spans: no fine pass, the coarse answer stands
    assert [p["pass"] for p in p1.record["passes"]] == ["coarse"]
    assert p1.record["answer"] == "C" and p1.record["fallback"] == "no_spans" and p1.record["spans"] == []
    assert {t["pass"] for t in p0.timing["passes"]} == {"coarse", "fine"} and p0.timing["total_s"] > 0


def test_no_spans_uniform_fallback_reads_uniform_frames(tiny_backend, questions):
    backend = ScriptedBackend(tiny_backend, lambda r, k: "<answer>A</answer>" if _is_coarse(r) else None)
    (p,) = predict(backend, questions[:1], "coarse-to-fine", replace(CFG, no_spans="uniform", uniform_frames=6))
    coarse, fine = p.record["passes"]
    assert fine["pass"] == "fine-uniform" and fine["frames"] == 6 and fine["clips"] == [[0.0, 12.0, 6]]
    assert p.record["answer"] == fine["answer"] and p.record["fallback"] is None


def test_one_stage_answers_and_grounds_in_one_pass(tiny_backend, questions):
    backend = ScriptedBackend(tiny_backend, lambda r, k: (grounded("C", [(1.0, 2.5)]), 0.7) if _is_coarse(r) else None)
    (p,) = predict(backend, questions[:1], "one-stage", CFG)
    assert p.record["answer"] == "C" and p.record["spans"] == [[1.0, 2.5]]
    assert p.record["confidence"] == pytest.approx(0.7) and len(p.record["passes"]) == 1


def test_divide_and_conquer_zooms_into_the_top_k_windows(tiny_backend, questions):
    assert not tiny_backend.geometry.timestamps  # Qwen2.5-VL: windows are shown from 0 s ("auto")
    # 12 s in 4-s windows; each window answers in window-relative seconds
    replies = {
        0.0: (grounded("A", [(1.0, 2.0)]), 0.9),
        4.0: (grounded("B", [(0.5, 1.5)]), 0.2),
        8.0: (grounded("C", [(1.0, 3.0)]), 0.6),
    }

    def script(request, _):
        if not request.choices and "This video in total has 4.0 seconds" in request.prompt:
            return replies[request.videos[0]["video_start"]]

    backend = ScriptedBackend(tiny_backend, script)
    (p,) = predict(backend, questions[:1], "divide-and-conquer", CFG)
    passes = p.record["passes"]
    assert [x["pass"] for x in passes] == ["window"] * 3 + ["fine"]
    for x, (s, e) in zip(passes, [(0, 4), (4, 8), (8, 12)]):
        assert [c[:2] for c in x["clips"]] == [[s, e]] and _inside(x["decoded"], [(s, e)])
        assert x["video_tokens"] <= SMALL.max_visual_tokens  # every window gets the full budget (authors' setting)
    assert [x["spans"] for x in passes[:3]] == [[[1.0, 2.0]], [[4.5, 5.5]], [[9.0, 11.0]]]
    assert p.record["spans"] == [[1.0, 2.0], [9.0, 11.0]]  # windows 1 and 3 are the two most confident
    assert [c[:2] for c in passes[3]["clips"]] == [[1.0, 2.0], [9.0, 11.0]]
    assert _inside(passes[3]["decoded"], [(1.0, 2.0), (9.0, 11.0)])
    assert p.record["answer"] == passes[3]["answer"]
    (c,) = predict(backend, questions[:1], "divide-and-conquer", replace(CFG, dc_final="confident"))
    assert c.record["passes"][-1]["confidence"] < 0.9  # the random model is far less sure than window 1
    assert c.record["answer"] == "A" and c.record["fallback"] == "window_more_confident"


def test_divide_and_conquer_absolute_windows_and_split_budget(tiny_backend, questions):
    def script(request, _):
        if "clip shows seconds 4.0-8.0" in request.prompt:
            return grounded("B", [(2.0, 6.0)]), 0.8  # absolute seconds, partly outside the window
        if "clip shows seconds" in request.prompt:
            return "<answer>A</answer>", 0.1

    backend = ScriptedBackend(tiny_backend, script)
    (p,) = predict(
        backend, questions[:1], "divide-and-conquer", replace(CFG, window_times="absolute", window_budget="split")
    )
    windows_ = p.record["passes"][:3]
    assert windows_[1]["spans"] == [[4.0, 6.0]] and p.record["spans"] == [[4.0, 6.0]]
    assert all(w["video_tokens"] <= SMALL.max_visual_tokens / 3 + 1 for w in windows_)


def test_iterative_zoom_refines_while_the_spans_shrink(tiny_backend, questions):
    def script(request, _):
        if _is_coarse(request):
            return grounded("A", [(2.0, 10.0)])
        if "clips show" in request.prompt or "clip shows" in request.prompt:
            if "2.0-10.0" in request.prompt:
                return grounded("B", [(3.0, 6.0)])
            if "3.0-6.0" in request.prompt:
                return grounded("B", [(3.5, 5.0), (11.0, 12.0)])  # the part outside what it saw is dropped

    backend = ScriptedBackend(tiny_backend, script)
    (p,) = predict(backend, questions[:1], "iterative", replace(CFG, max_fine_passes=3))
    names = [x["pass"] for x in p.record["passes"]]
    assert names == ["coarse", "refine1", "refine2", "fine"]
    assert p.record["spans"] == [[3.5, 5.0]] and p.record["stop"] == "rounds"
    assert [c[:2] for c in p.record["passes"][3]["clips"]] == [[3.5, 5.0]]
    assert _inside(p.record["passes"][2]["decoded"], [(3.0, 6.0)])
    # spans that stop shrinking end the rounds; the fine pass reads the last shrinking spans
    grow = ScriptedBackend(tiny_backend, lambda r, k: grounded("A", [(2.0, 10.0)]) if not r.choices else None)
    (q,) = predict(grow, questions[:1], "iterative", replace(CFG, max_fine_passes=5))
    assert [x["pass"] for x in q.record["passes"]] == ["coarse", "refine1", "fine"]
    assert q.record["stop"] == "spans_stopped_shrinking" and q.record["spans"] == [[2.0, 10.0]]


def test_iterative_with_one_round_is_coarse_to_fine(tiny_backend, questions):
    backend = ScriptedBackend(tiny_backend, lambda r, k: grounded("A", [(3.0, 5.0)]) if _is_coarse(r) else None)
    (a,) = predict(backend, questions[:1], "iterative", replace(CFG, max_fine_passes=1))
    (b,) = predict(backend, questions[:1], "coarse-to-fine", CFG)
    assert [x["pass"] for x in a.record["passes"]] == [x["pass"] for x in b.record["passes"]] == ["coarse", "fine"]
    assert a.record["answer"] == b.record["answer"] and a.record["spans"] == b.record["spans"]


def test_all_modes_run_on_the_real_model_alone(tiny_backend, bench_rows):
    qs = [Question.from_row(r) for r in read_rows(bench_rows)][:2]
    for mode in ("one-stage", "coarse-to-fine", "divide-and-conquer", "iterative"):
        preds = predict(tiny_backend, qs, mode, CFG)
        assert [p.record["qid"] for p in preds] == [q.qid for q in qs]
        for p in preds:
            assert p.record["mode"] == mode
            assert all(x["video_tokens"] <= SMALL.max_visual_tokens for x in p.record["passes"])


def test_windows_cover_the_video_without_overlap():
    assert windows(600.0, 256.0) == [(0.0, 256.0), (256.0, 512.0), (512.0, 600.0)]
    assert windows(512.5, 256.0) == [(0.0, 256.0), (256.0, 512.5)]  # a 0.5-s tail joins the last window
    assert windows(100.0, 256.0) == [(0.0, 100.0)]


def test_mode_config_rejects_unknown_settings():
    with pytest.raises(ValueError, match="no_spans"):
        ModeConfig(no_spans="random")
    with pytest.raises(ValueError):
        ModeConfig(top_k=0)
    with pytest.raises(ValueError, match="unknown mode"):
        predict(None, [], "two-stage")


def test_qwen3_vl_zoom_clips_carry_their_absolute_timestamps(tiny_qwen3_dir, evidence_video):
    """Qwen3-VL writes each frame's time into the prompt from the decoder's metadata: a zoom clip of
    3-5 s is announced at 4.0 s, not at 0 s; frames are not sampled a second time by the processor."""
    from zoomzero_plugin.gvqa.zoom import ZoomBudget
    from zoomzero_plugin.inference.hf_backend import TransformersBackend

    backend = TransformersBackend(str(tiny_qwen3_dir), device="cpu", batch_size=2)
    assert backend.geometry.factor == 32 and backend.geometry.timestamps
    budget = ZoomBudget(max_visual_tokens=64, min_frame_pixels=4 * 32 * 32, fps=1.0).with_geometry(backend.geometry)
    q = Question("q", str(evidence_video), "What colour?", ("red", "blue"), EVIDENCE_DURATION)
    scripted = ScriptedBackend(backend, lambda r, k: grounded("A", [(3.0, 5.0), (8.0, 9.5)]) if _is_coarse(r) else None)
    (p,) = predict(scripted, [q], "coarse-to-fine", replace(CFG, budget=budget))
    coarse, fine = p.record["passes"]
    assert [c[:3] for c in fine["decoded"]] == [[3.0, 5.0, 2], [8.0, 9.5, 2]]
    assert fine["video_tokens"] <= 64 and p.record["answer"] in ("A", "B")
    fine_request = scripted.calls[-1][0]
    inputs, _ = backend.prepare([fine_request])
    text = backend.tokenizer.decode(inputs["input_ids"][0])
    assert "<4.0 seconds>" in text and "<8.8 seconds>" in text and "<0.0 seconds>" not in text
    # so divide-and-conquer tells each window its true seconds (window_times="auto")
    predict(scripted, [q], "divide-and-conquer", replace(CFG, budget=budget))
    shown = [
        r.prompt.split(" of a ")[0].split("clip shows seconds ")[-1]
        for r, _ in scripted.calls
        if "clip shows" in r.prompt
    ]
    assert shown == ["0.0-4.0", "4.0-8.0", "8.0-12.0"]


@pytest.mark.parametrize("mode", ["one-stage", "coarse-to-fine", "divide-and-conquer", "iterative"])
def test_zoomzero_eval_plans_every_mode_on_the_tiny_qwen3_vl_geometry(mode, tiny_qwen3_dir, bench_rows, tmp_path):
    """`zoomzero eval` on the tiny Qwen3-VL (transformers backend): Eq. 3 in its 32-px tokens, worked by hand.
    12-s 224x168 videos, L_v = 64, 1 fps, V_min = 4,096 px = 2 tokens a frame (4,096 / (32² · 2)).
    Whole video: N = min(12, 64 / 2) = 12 frames, V_res = 64 / 12 tokens = int(64 / 12 · 2,048) = 10,922 px;
    qwen-vl-utils fits 168x224 under 10,922 px on the 32-px grid: beta = sqrt(37,632 / 10,922) = 1.856,
    floor(90.5 / 32) = 2 and floor(120.7 / 32) = 3 tokens a side: 64x96 px, 4 x 6 patches of 16 px merged 2 x 2:
    6 tokens per two-frame temporal patch, 6 patches: 36 video tokens.
    A 4-s window: N = 4, V_res = 16 tokens = 32,768 px: 168x224 -> 128x192, 8 x 12 / 4 = 24 per patch, 2 patches: 48.
    (On Qwen2.5-VL's 28-px tokens the same budget gives other sizes: the geometry is the model's.)"""
    import json

    from zoomzero_plugin.commands.cli import main

    out = tmp_path / "out"
    assert (
        main(
            [
                "eval",
                "--model",
                str(tiny_qwen3_dir),
                "--data",
                str(bench_rows),
                "--benchmark",
                "rows",
                "--mode",
                mode,
                "--limit",
                "1",
                "--max-visual-tokens",
                "64",
                "--fps",
                "1",
                "--min-frame-pixels",
                "4096",
                "--max-new-tokens",
                "4",
                "--window-seconds",
                "4",
                "--no-spans",
                "uniform",
                "--uniform-frames",
                "4",
                "--device",
                "cpu",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (record,) = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    first = record["passes"][0]
    if mode == "divide-and-conquer":
        windows_ = [(w["frames"], w["frame_pixels"], w["video_tokens"]) for w in record["passes"][:3]]
        assert windows_ == [(4, 32768, 48)] * 3
    else:
        assert (first["frames"], first["frame_pixels"], first["video_tokens"]) == (12, 10922, 36)
    assert all(p["video_tokens"] <= 64 for p in record["passes"])
    assert record["mode"] == mode and (len(record["passes"]) > 1) == (mode != "one-stage")
