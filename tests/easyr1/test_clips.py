"""Clip specs through EasyR1's own video loading, and fuzzed option parsing."""

import pytest
import torch
from hypothesis import example, given, settings, strategies as st

from zoomzero_plugin.gvqa.zoom import ZoomBudget, plan_zoom
from zoomzero_plugin.hosts.easyr1.clips import decode_clip_spec, make_clip_spec
from zoomzero_plugin.hosts.options import GVQA, ZoomOptions, read_options
from zoomzero_plugin.synthetic.videos import dominant_color
from zoomzero_plugin.vision import fetch_patch_size

BUDGET = ZoomBudget(max_visual_tokens=256, min_frame_pixels=3136, max_frame_pixels=50176, fps=2.0)


def colours(frames):
    return [dominant_color(f.permute(1, 2, 0).numpy()) for f in frames]


def test_rollout_worker_decodes_only_the_spans_of_a_clip_spec(evidence_video):
    from verl.utils import dataset
    from verl.workers import fsdp_workers
    from verl.workers.rollout import vllm_rollout_spmd as rollout

    assert rollout.process_video is dataset.process_video is fsdp_workers.process_video  # every holder patched
    plan = plan_zoom([(3.0, 5.0), (8.0, 9.5)], 12.0, BUDGET)  # the red and the blue square
    spec = make_clip_spec(
        str(evidence_video), plan.video_elements(str(evidence_video)), fetch_patch_size(plan.budget.factor)
    )
    out = rollout._process_multi_modal_data({"videos": [spec]}, 3136, 12544, 1.0)  # EasyR1's own function
    frames = out["video"][0]
    assert frames.shape[0] == plan.frames and frames.shape[-1] * frames.shape[-2] == 224 * 168
    seen = colours(frames)
    first = plan.clips[0].nframes
    assert set(seen[: first - 1]) == {"red"} and set(seen[first : first + plan.clips[1].nframes - 1]) == {"blue"}
    assert None not in seen[: first - 1], "no frame from outside the spans"


def test_clip_spec_metadata_keeps_true_timestamps(evidence_video):
    plan = plan_zoom([(8.0, 9.5), (3.0, 5.0)], 12.0, BUDGET)
    spec = make_clip_spec(
        str(evidence_video), plan.video_elements(str(evidence_video)), fetch_patch_size(plan.budget.factor)
    )
    (frames, metadata), fps = decode_clip_spec(spec, return_fps=True, return_metadata=True)
    times = [i / metadata["fps"] for i in metadata["frames_indices"]]
    assert len(times) == frames.shape[0] == plan.frames
    assert times == sorted(times), "clips are decoded in time order"
    assert all(3.0 <= t <= 5.0 or 8.0 <= t <= 9.5 for t in times)
    assert fps == pytest.approx(plan.frames / plan.seconds)


def test_plain_video_paths_decode_as_easyr1s_original_with_qwen_vl_utils_own_reader(evidence_video, monkeypatch):
    import qwen_vl_utils.vision_process as vp
    from verl.utils import dataset

    patched = dataset.process_video(str(evidence_video), 3136, 12544, 1.0, return_fps=True)  # through the store
    monkeypatch.setitem(vp.VIDEO_READER_BACKENDS, "decord", vp.VIDEO_READER_BACKENDS["decord"].original)
    original = dataset.process_video.__wrapped__(str(evidence_video), 3136, 12544, 1.0, return_fps=True)
    assert torch.equal(patched[0], original[0]) and patched[1] == original[1]


def test_a_batchs_videos_decode_ahead_in_threads_to_the_same_frames(evidence_video):
    from verl.workers.rollout import vllm_rollout_spmd as rollout

    from zoomzero_plugin.hosts.easyr1 import clips

    plan = plan_zoom([(3.0, 5.0)], 12.0, BUDGET)
    spec = make_clip_spec(str(evidence_video), plan.video_elements(str(evidence_video)), plan.budget.factor // 2)
    rows = [{"videos": [str(evidence_video)]}, {"videos": [spec]}]
    want = [rollout._process_multi_modal_data(r, 3136, 12544, 1.0)["video"][0] for r in rows]
    assert clips.prefetch_videos(rows + rows, 3136, 12544, 1.0) == 2, "a repeated row is decoded once"
    assert len(clips._PREFETCHED) == 2
    got = [rollout._process_multi_modal_data(r, 3136, 12544, 1.0)["video"][0] for r in rows]
    assert all(torch.equal(g, w) for g, w in zip(got, want)) and clips._PREFETCHED == {}, "each result taken once"


def test_uniform_budget_gives_the_requested_frames():
    zoom = ZoomOptions.from_section({"no_spans": "uniform", "uniform_frames": 16, "fps": 0.5})
    from zoomzero_plugin.gvqa.zoom import plan_pass

    plan = plan_pass([(0.0, 300.0)], 300.0, zoom.uniform_budget(300.0))
    assert plan.frames == 16


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**7), st.floats(allow_nan=True), st.text(max_size=8))
SECTION = st.dictionaries(
    st.sampled_from(
        [
            "enable",
            "fps",
            "max_visual_tokens",
            "min_frame_pixels",
            "max_frame_pixels",
            "max_new_tokens",
            "no_spans",
            "uniform_frames",
            "eps",
            "glue_components",
            "max_calls",
            "schedule",
            "typo",
        ]
    ),
    st.one_of(SCALARS, st.lists(st.sampled_from(["format", "iou", "zoom", "x"]), max_size=3)),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@example(zoom={"max_visual_tokens": float("inf")}, tokenadv={"eps": float("nan")}, agent=None)
@given(
    zoom=st.one_of(st.none(), SECTION, SCALARS),
    tokenadv=st.one_of(st.none(), SECTION, SCALARS),
    agent=st.one_of(st.none(), SECTION, SCALARS),
)
def test_option_reading_is_total(zoom, tokenadv, agent):
    """Any recipe input gives valid options for each section, or problems naming the section's keys: never an
    exception, and a section is None exactly when it has problems."""
    kwargs = {"zoom": zoom, "tokenadv": tokenadv, "agent": agent}
    options = read_options(GVQA, kwargs)
    assert all(p.startswith("worker.reward.reward_function_kwargs") for p in options.problems)
    for name in ("zoom", "tokenadv", "agent"):
        section = getattr(options, name)
        named = [p for p in options.problems if p.startswith(f"worker.reward.reward_function_kwargs.{name}")]
        assert (section is None) == bool(named), (name, options.problems)
    if options.zoom is not None:
        options.zoom.on()
        assert options.zoom.no_spans in ("skip", "uniform") and options.zoom.max_new_tokens >= 1
    if options.tokenadv is not None:
        assert options.tokenadv.eps > 0 and options.tokenadv.glue_components
    if options.agent is not None:
        assert options.agent.schedule in ("continuous", "rounds") and options.agent.budget.max_calls >= 0
