import pytest

from zoomzero_plugin.gvqa.zoom import ZoomBudget, fetch_plan, paper_budget, plan_coarse, plan_pass, plan_zoom
from zoomzero_plugin.synthetic.videos import dominant_color
from zoomzero_plugin.video import probe_duration
from zoomzero_plugin.vision import VisionGeometry

from .conftest import EVIDENCE_DURATION

PAPER = ZoomBudget(
    max_visual_tokens=8192, min_frame_pixels=16 * 28 * 28, max_frame_pixels=768 * 28 * 28, fps=1.0, max_frames=768
)


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
    small = ZoomBudget(max_visual_tokens=256, min_frame_pixels=16 * 28 * 28, fps=1.0)
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
    budget = ZoomBudget(max_visual_tokens=60, min_frame_pixels=4 * 28 * 28, max_frame_pixels=768 * 28 * 28, fps=2.0)
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


# The paper's budgets (short grounded-QA videos: 8,192 tokens at 1 fps; long videos: 16,384 tokens, <= 256
# frames), checked against Eq. 3 worked by hand. Per frame: V_min = 16·28² / (28²·2) = 8 tokens,
# V_max = 768·28² / (28²·2) = 384 tokens (16 and 768 per two-frame temporal patch, qwen-vl-utils' unit).
@pytest.mark.parametrize(
    ("benchmark", "seconds", "frames", "tokens_per_frame"),
    [
        ("nextgqa", 40.0, 40, 204.8),  # N = min(40·1, 8192/8, 256) = 40; 8192/40 = 204.8
        ("rextime", 150.0, 150, 8192 / 150),  # 54.6
        ("nextgqa", 600.0, 256, 32.0),  # capped at 256 frames: 8192/256
        ("lvbench", 3600.0, 256, 64.0),  # an hour: 256 frames at 16384/256 = 64
        ("videomme", 180.0, 180, 16384 / 180),  # 91.0
        ("cgbench", 1800.0, 256, 64.0),
        ("mlvu", 100.0, 100, 163.84),
    ],
)
def test_paper_budget_coarse_pass(benchmark, seconds, frames, tokens_per_frame):
    plan = plan_coarse(seconds, paper_budget(benchmark))
    assert plan.frames == frames
    assert plan.tokens_per_frame == pytest.approx(tokens_per_frame, abs=1e-3)


@pytest.mark.parametrize(
    ("benchmark", "spans", "frames", "tokens_per_frame"),
    [
        ("nextgqa", [(10.0, 18.0)], 8, 384.0),  # 8192/8 = 1024, capped at V_max 384
        ("lvbench", [(100.0, 116.0), (2000.0, 2016.0)], 32, 384.0),  # 16384/32 = 512 -> 384
        ("videomme", [(0.0, 120.0)], 120, 16384 / 120),  # 136.5: the budget binds, not V_max
        ("rextime", [(0.0, 64.0)], 64, 128.0),  # 8192/64
    ],
)
def test_paper_budget_fine_pass(benchmark, spans, frames, tokens_per_frame):
    plan = plan_zoom(spans, 3600.0, paper_budget(benchmark))
    assert plan.frames == frames
    assert plan.tokens_per_frame == pytest.approx(tokens_per_frame, abs=1e-3)


def test_budget_presets_follow_the_benchmark():
    assert paper_budget("nextgqa").max_visual_tokens == 8192 and paper_budget("rextime").max_visual_tokens == 8192
    for long in ("cgbench", "videomme", "mlvu", "lvbench"):
        assert paper_budget(long).max_visual_tokens == 16384 and paper_budget(long).max_frames == 256
    assert paper_budget(None) == ZoomBudget() == paper_budget("rows")
    # on a model with 16-px patches (32-px tokens, Qwen3-VL): the same 8..384 tokens per frame, in its pixels
    qwen3 = paper_budget("lvbench", VisionGeometry(patch_size=16, merge_size=2, temporal_patch=2))
    assert (qwen3.factor, qwen3.min_frame_pixels, qwen3.max_frame_pixels) == (32, 8 * 32 * 32 * 2, 384 * 32 * 32 * 2)
    b = ZoomBudget()
    assert (b.fps, b.max_frames) == (1.0, 256)
    assert b.frame_tokens(b.min_frame_pixels) == 8 and b.frame_tokens(b.max_frame_pixels) == 384


QWEN3 = VisionGeometry(patch_size=16, merge_size=2, temporal_patch=2, timestamps=True)


def test_the_tiny_qwen3_vl_geometry_is_read_from_its_processor(tiny_qwen3_processor, tiny_processor):
    assert VisionGeometry.of(tiny_qwen3_processor) == QWEN3 and QWEN3.factor == 32
    assert VisionGeometry.of(tiny_processor) == VisionGeometry(14, 2, 2, timestamps=False)


def test_eq3_on_qwen3_vl_tokens():
    """Eq. 3 with 32-px tokens, worked by hand: L_v = 8192, V_min = 8, V_max = 384 tokens per frame, 1 fps.
    A frame of P pixels costs P / (32² · 2) tokens, so V_min = 16,384 px and V_max = 786,432 px."""
    budget = paper_budget(None, QWEN3)
    assert (budget.min_frame_pixels, budget.max_frame_pixels) == (16384, 786432)
    coarse = plan_coarse(60.0, budget)  # N = min(60 · 1, 8192 / 8, 256) = 60; V_res = min(8192 / 60, 384)
    assert coarse.frames == 60 and coarse.frame_pixels == int(8192 / 60 * 2048)
    assert coarse.tokens_per_frame == pytest.approx(8192 / 60, abs=1e-2)
    fine = plan_zoom([(20.0, 30.0)], 60.0, budget)  # N = 10; V_res = min(819.2, 384) = 384: V_max
    assert fine.frames == 10 and fine.frame_pixels == 786432 and fine.tokens_per_frame == 384
    # the same budget on Qwen2.5-VL's 28-px tokens: 8 and 384 tokens per frame are 12,544 and 602,112 px
    assert fine.frames * 384 <= 8192 and paper_budget(None).max_frame_pixels == 602112


def test_qwen3_vl_frames_are_decoded_on_its_32_px_grid(evidence_video):
    plan = plan_zoom([(3.0, 5.0)], 12.0, paper_budget(None, QWEN3))
    (clip,) = fetch_plan(plan, str(evidence_video))
    height, width = clip.frames.shape[-2:]
    assert height % 32 == 0 and width % 32 == 0 and height * width <= plan.frame_pixels
