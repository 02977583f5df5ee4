import pytest

from zoomzero_plugin.synthetic.videos import dominant_color
from zoomzero_plugin.video import fetch_plan, probe_duration
from zoomzero_plugin.zoom import ZoomBudget, plan_coarse, plan_pass, plan_zoom

from .conftest import EVIDENCE_DURATION

PAPER = ZoomBudget(max_tokens=8192, min_frame_pixels=16 * 28 * 28, max_frame_pixels=768 * 28 * 28, fps=1.0)


def test_equation_3_on_the_paper_budget():
    coarse = plan_coarse(600.0, PAPER)  # 10 minutes at 1 fps: 600 frames, budget-bound resolution
    assert coarse.frames == 600
    assert coarse.tokens_per_frame == pytest.approx(8192 / 600, rel=1e-3)
    assert coarse.tokens <= 8192
    fine = plan_zoom([(100.0, 110.0), (300.0, 310.0)], 600.0, PAPER)
    assert fine.frames == 20 and len(fine.clips) == 2
    assert fine.frame_pixels == 768 * 28 * 28  # capped at V_max
    assert fine.tokens_per_frame > 20 * coarse.tokens_per_frame


def test_frame_count_is_capped_by_the_minimum_resolution():
    plan = plan_coarse(7200.0, PAPER)  # 2 hours: L_v / V_min = 8192 / 8 = 1024 > max_frames 768
    assert plan.frames == 768 and plan.tokens_per_frame == pytest.approx(8192 / 768, rel=1e-3)
    small = ZoomBudget(max_tokens=256, min_frame_pixels=16 * 28 * 28, fps=1.0)
    assert plan_coarse(7200.0, small).frames == 32  # 256 tokens / 8 tokens per frame
    assert plan_coarse(7200.0, small).frame_pixels == 16 * 28 * 28


def test_short_spans_are_widened_and_frames_shared_by_length():
    plan = plan_pass([(10.0, 10.2), (20.0, 30.0)], 60.0, ZoomBudget(fps=2.0, min_clip_seconds=2.0))
    assert [(c.start, c.end) for c in plan.clips] == [(9.1, 11.1), (20.0, 30.0)]
    assert [c.nframes for c in plan.clips] == [4, 20]
    assert all(c.nframes % 2 == 0 for c in plan.clips)


def test_no_spans_means_no_zoom_plan():
    assert plan_zoom([], 30.0) is None
    with pytest.raises(ValueError):
        plan_pass([(1, 2)], 0.0)


def test_qwen_vl_utils_returns_what_the_plan_asked_for(evidence_video):
    import qwen_vl_utils

    assert probe_duration(str(evidence_video)) == pytest.approx(EVIDENCE_DURATION)
    budget = ZoomBudget(max_tokens=60, min_frame_pixels=4 * 28 * 28, max_frame_pixels=768 * 28 * 28, fps=2.0)
    coarse = plan_coarse(EVIDENCE_DURATION, budget)
    fine = plan_zoom([(3.0, 5.0), (8.0, 9.5)], EVIDENCE_DURATION, budget)
    assert coarse.frames == 24 and fine.frames == 8
    for plan in (coarse, fine):
        clips = fetch_plan(plan, str(evidence_video))
        assert [c.frames.shape[0] for c in clips] == [c.nframes for c in plan.clips]
        expect_hw = qwen_vl_utils.smart_resize(168, 224, 28, budget.min_frame_pixels, plan.frame_pixels)
        for clip in clips:
            assert tuple(clip.frames.shape[-2:]) == expect_hw
            assert clip.frame_pixels <= plan.frame_pixels  # smart_resize floors to multiples of 28
    coarse_px = fetch_plan(coarse, str(evidence_video))[0].frame_pixels
    fine_clips = fetch_plan(fine, str(evidence_video))
    assert fine_clips[0].frame_pixels > 4 * coarse_px  # the zoom pass sees each frame in more detail
    # every zoom frame comes from inside the predicted spans, and shows the evidence there
    red, blue = fine_clips
    assert all(12 <= i <= 20 for i in red.metadata["frames_indices"])
    assert all(32 <= i <= 38 for i in blue.metadata["frames_indices"])
    assert [dominant_color(f.numpy()) for f in red.frames[:-1]] == ["red"] * (red.frames.shape[0] - 1)
    assert dominant_color(blue.frames[1].numpy()) == "blue"
