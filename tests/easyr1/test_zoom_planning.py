"""The zoom hook's driver-side bookkeeping, without generation: parse, plan, the zoom batch, answers, stats."""

import pytest
import torch
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.parsing import glue_spans, parse_response
from zoomzero_plugin.gvqa.prompts import zoom_prompt
from zoomzero_plugin.hosts.easyr1.zoomzero.zoom_hook import ZoomHook
from zoomzero_plugin.hosts.options import ZoomOptions
from zoomzero_plugin.token_masks import decode_rows, encode_rows

TRUTHS = [
    GroundTruth(
        answer="B",
        options=("red", "green", "blue"),
        spans=((3.0, 5.0),),
        duration=12.0,
        qid="a",
        question="Which colour?",
    ),
    GroundTruth(answer="A", options=("cat", "dog"), spans=(), duration=30.0, qid="b", question="Which animal?"),
]
TEXTS = [
    "<think>x</think><answer>B</answer><glue>[(3.0, 5.0), (4.0, 6.0)]</glue>",
    "<think>x</think><answer>B</answer>",
    "<think>x</think><answer>A</answer><glue>[(50, 60)]</glue>",  # outside the 30 s video: no valid span
    "<think>x</think><answer>A</answer><glue>[(10, 12)]</glue>",
]
MMD = [{"videos": ["/v/a.mp4"]}, {"videos": ["/v/a.mp4"]}, {"videos": ["/v/b.mp4"]}, {"videos": ["/v/b.mp4"]}]


@pytest.fixture
def hook(easyr1_tokenizer, easyr1_processor):
    options = ZoomOptions.from_section(
        {"max_visual_tokens": 256, "min_frame_pixels": 3136, "max_frame_pixels": 50176, "fps": 2.0}
    )
    return ZoomHook(options, easyr1_tokenizer, easyr1_processor, coarse_fps=1.0)


def truths_json():
    return [TRUTHS[0].to_json()] * 2 + [TRUTHS[1].to_json()] * 2


def test_plan_uses_the_spans_the_reward_sees(hook):
    requests = hook.plan(TEXTS, truths_json(), MMD)
    assert requests.rows == [0, 3] and requests.span_seconds == [3.0, 0.0, 0.0, 2.0]
    assert [(c.start, c.end) for c in requests.plans[0].clips] == [(3.0, 6.0)]
    assert requests.videos == ["/v/a.mp4", "/v/a.mp4", "/v/b.mp4", "/v/b.mp4"]


def test_no_spans_uniform_gives_a_whole_video_pass(hook):
    hook.options = ZoomOptions.from_section(
        {
            "no_spans": "uniform",
            "uniform_frames": 8,
            "max_visual_tokens": 256,
            "min_frame_pixels": 3136,
            "max_frame_pixels": 50176,
        }
    )
    requests = hook.plan(TEXTS, truths_json(), MMD)
    assert requests.rows == [0, 1, 2, 3]
    whole = requests.plans[1]
    assert [(c.start, c.end) for c in whole.clips] == [(0.0, 12.0)] and whole.frames == 8


def test_zoom_batch_prompts_uids_and_clip_specs(hook, easyr1_processor, easyr1_tokenizer):
    requests = hook.plan(TEXTS, truths_json(), MMD)
    batch = hook.zoom_batch(requests)
    assert len(batch) == 2 and batch.meta_info["n"] == 1 and batch.meta_info["temperature"] == 0.0
    expected = easyr1_processor.apply_chat_template(
        [
            {
                "role": "user",
                "content": [
                    {"type": "video"},
                    {
                        "type": "text",
                        "text": zoom_prompt(TRUTHS[1].question, TRUTHS[1].options).removeprefix("<video>"),
                    },
                ],
            }
        ],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert batch.non_tensor_batch["raw_prompt_ids"][1] == easyr1_tokenizer.encode(expected, add_special_tokens=False)
    ids, mask = batch.batch["input_ids"], batch.batch["attention_mask"]
    for j, raw in enumerate(batch.non_tensor_batch["raw_prompt_ids"]):
        assert ids[j][mask[j].bool()].tolist() == raw and mask[j, -1] == 1  # left padded
    spec = batch.non_tensor_batch["multi_modal_data"][0]["videos"][0]
    assert spec["video"] == "/v/a.mp4" and [(c["video_start"], c["video_end"]) for c in spec["clips"]] == [(3.0, 6.0)]
    uids = list(batch.non_tensor_batch["uid"])
    assert len(set(uids)) == 2 and all(u.startswith("zoom-") for u in uids)
    assert not set(uids) & set(hook.zoom_batch(requests).non_tensor_batch["uid"]), "fresh uids every pass"


def test_missing_question_stops_the_zoom_pass(hook):
    bare = GroundTruth(answer="A", options=("x", "y"), spans=(), duration=5.0, qid="q9")
    requests = hook.plan(["<glue>[(1, 2)]</glue>"], [bare.to_json()], [{"videos": ["/v.mp4"]}])
    with pytest.raises(ValueError, match="q9.*no 'question'"):
        hook.zoom_batch(requests)


def test_answers_and_stats(hook, easyr1_tokenizer):
    from verl.protocol import DataProto

    requests = hook.plan(TEXTS, truths_json(), MMD)
    outs = [easyr1_tokenizer.encode(t, add_special_tokens=False) + [easyr1_tokenizer.eos_token_id] for t in ("B", "C.")]
    width = max(map(len, outs))
    responses = torch.tensor([x + [easyr1_tokenizer.pad_token_id] * (width - len(x)) for x in outs])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in outs])
    output = DataProto.from_dict(tensors={"responses": responses, "response_mask": mask})
    answers = hook.answers(requests, output, 4)
    assert answers == ["B", None, None, "C"]
    prompts = torch.zeros(4, 10, dtype=torch.long)
    prompts[:, :6] = hook.video_token_id
    stats = hook.stats(requests, answers, prompts)
    assert stats["zoom/valid_span_share"] == 0.5 and stats["zoom/accuracy"] == 0.5
    assert stats["zoom/span_seconds"] == 2.5 and stats["zoom/zoomed_share"] == 0.5
    assert stats["zoom/coarse_frames"] == 21.0  # 12 s and 30 s at 1 fps
    # Eq. 3 by hand (fps 2, L_v 256, V_min 3136 px = 2 tokens, V_max 50176 px = 32 tokens; a token is 28² px
    # × 2 frames): row 0 reads (3, 6), 3 s → 6 frames at min(256/6, 32) = 32 tokens; row 3 reads (10, 12),
    # 2 s → 4 frames at min(256/4, 32) = 32 tokens.
    assert stats["zoom/zoom_frames"] == 5.0 and stats["zoom/zoom_tokens_per_frame"] == 32.0
    assert stats["zoom/coarse_tokens_per_frame"] == pytest.approx((6 / 12 + 6 / 12 + 6 / 30 + 6 / 30) / 4)
    assert stats["zoom/span_coverage"] == pytest.approx((3 / 12 + 2 / 30) / 2) and stats["zoom/answered"] == 1.0


def test_identical_zoom_requests_are_generated_once_and_shared(hook, easyr1_tokenizer):
    """A group of 8 citing three span sets (one of them twice merged differently but equal after merging) and a
    response to another question over the same video: 4 requests, each answer read back by every response."""
    from verl.protocol import DataProto

    other = GroundTruth(answer="A", options=("red", "green"), spans=(), duration=12.0, qid="c", question="Other?")
    glue = [
        "[(3.0, 5.0)]",
        "[(3.0, 5.0)]",
        "[(6.0, 8.0)]",
        "[(3.0, 4.0), (4.0, 5.0)]",
        "[(6.0, 8.0)]",
        "[(1.0, 2.0)]",
        "[(3.0, 5.0)]",
        "[(1.0, 2.0)]",
    ]
    texts = [f"<think>x</think><answer>B</answer><glue>{g}</glue>" for g in glue] + [
        TEXTS[0].replace("(4.0, 6.0)", "(3.0, 5.0)")
    ]
    truths = [TRUTHS[0].to_json()] * 8 + [other.to_json()]
    requests = hook.plan(texts, truths, [{"videos": ["/v/a.mp4"]}] * 9)
    assert requests.rows == list(range(9))
    assert requests.request_of == [0, 0, 1, 0, 1, 2, 0, 2, 3], "(3,4)+(4,5) merges to (3,5): the same request"
    batch = hook.zoom_batch(requests)
    assert len(batch) == 4
    clips = [
        [(c["video_start"], c["video_end"]) for c in m["videos"][0]["clips"]]
        for m in batch.non_tensor_batch["multi_modal_data"]
    ]
    assert clips == [[(3.0, 5.0)], [(6.0, 8.0)], [(1.0, 2.0)], [(3.0, 5.0)]]
    outs = [easyr1_tokenizer.encode(t, add_special_tokens=False) + [easyr1_tokenizer.eos_token_id] for t in "ABCD"]
    output = DataProto.from_dict(
        tensors={"responses": torch.tensor(outs), "response_mask": torch.ones(4, 2, dtype=torch.long)}
    )
    assert hook.answers(requests, output, 9) == ["A", "A", "B", "A", "B", "C", "A", "C", "D"]
    stats = hook.stats(requests, hook.answers(requests, output, 9), torch.zeros(9, 4, dtype=torch.long))
    assert stats["zoom/requests"] == 4.0 and stats["zoom/zoomed_share"] == 1.0


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="<>/gluethinkanswr[](),.0123456789 -eE", max_size=80), st.one_of(st.none(), st.floats(0.5, 100))
)
def test_glue_spans_is_parse_response_spans(text, duration):
    assert glue_spans(text, duration) == parse_response(text, duration).spans


def test_batched_decode_and_encode_match_the_tokenizer(easyr1_tokenizer):
    texts = ["<answer>B</answer><glue>[(1.5, 2.0)]</glue>", "Respond with only the letter.", "ünïcödé ✓"]
    rows = [easyr1_tokenizer.encode(t, add_special_tokens=False) + [easyr1_tokenizer.eos_token_id] for t in texts]
    for skip in (True, False):
        assert decode_rows(easyr1_tokenizer, rows, skip) == [
            easyr1_tokenizer.decode(r, skip_special_tokens=skip) for r in rows
        ]
    assert encode_rows(easyr1_tokenizer, texts) == [easyr1_tokenizer.encode(t, add_special_tokens=False) for t in texts]


def test_answers_read_the_answer_tag_the_paper_shows(hook, easyr1_tokenizer):
    """A fine pass that writes <answer>B</answer> (the paper's figures), even cut off before </answer>, is read."""
    from verl.protocol import DataProto

    requests = hook.plan(TEXTS, truths_json(), MMD)
    outs = [easyr1_tokenizer.encode(t, add_special_tokens=False) for t in ("<answer>B</answer>", "<answer>C")]
    width = max(map(len, outs))
    responses = torch.tensor([x + [easyr1_tokenizer.pad_token_id] * (width - len(x)) for x in outs])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in outs])
    output = DataProto.from_dict(tensors={"responses": responses, "response_mask": mask})
    assert hook.answers(requests, output, 4) == ["B", None, None, "C"]


def test_zoom_prompt_style_option(easyr1_tokenizer, easyr1_processor):
    options = ZoomOptions.from_section(
        {"max_visual_tokens": 256, "min_frame_pixels": 3136, "max_frame_pixels": 50176, "prompt": "concise"}
    )
    concise = ZoomHook(options, easyr1_tokenizer, easyr1_processor, coarse_fps=1.0)
    ids = concise.prompt_ids([TRUTHS[0]])[0]
    text = easyr1_tokenizer.decode(ids)
    assert "Question: Which colour?\nOptions:\n(A) red\n(B) green\n(C) blue\nRespond with only the letter" in text


def _reference_plan(hook, texts, truths, videos):
    """The plan loop as first written (a plan made and hashed per response): rows, plans, request_of, distinct."""
    from zoomzero_plugin.gvqa.zoom import plan_pass, plan_zoom

    rows, plans, request_of, distinct, seconds, sent = [], [], [], [], [], {}
    for i, (text, truth) in enumerate(zip(texts, truths)):
        spans = parse_response(text, truth.duration).spans
        seconds.append(sum(e - s for s, e in spans))
        plan = plan_zoom(spans, truth.duration, hook.budget)
        if plan is None and hook.options.no_spans == "uniform":
            budget = hook.options.uniform_budget(truth.duration, hook.geometry)
            plan = plan_pass([(0.0, truth.duration)], truth.duration, budget)
        if plan is not None:
            key = (videos[i], plan, truth.question, truth.options)
            if key not in sent:
                sent[key] = len(distinct)
                distinct.append(len(rows))
            request_of.append(sent[key])
            rows.append(i)
            plans.append(plan)
    return rows, plans, request_of, distinct, seconds


@pytest.mark.parametrize("no_spans", ["skip", "uniform"])
def test_plan_and_decode_match_the_straightforward_loop(hook, easyr1_tokenizer, no_spans):
    """A random batch of 96 responses (few span sets, so plans repeat; merged-equal sets; spans past the end)."""
    import random

    hook.options = ZoomOptions.from_section(
        {
            "no_spans": no_spans,
            "uniform_frames": 8,
            "max_visual_tokens": 256,
            "min_frame_pixels": 3136,
            "max_frame_pixels": 50176,
            "fps": 2.0,
        }
    )
    rng = random.Random(7)
    truths = [
        GroundTruth(answer="A", options=("x", "y"), spans=(), duration=d, qid=f"q{k}", question=f"Q{k % 2}?")
        for k, d in enumerate((12.0, 30.0, 12.0))
    ]
    glue = [
        "",
        "[]",
        "[(3.0, 5.0)]",
        "[(3.0, 4.0), (4.0, 5.0)]",
        "[(0, 0.2)]",
        "[(11.5, 40)]",
        "[(50, 60)]",
        "[(1, 2), (6, 9)]",
    ]
    texts, picked, videos = [], [], []
    for _ in range(96):
        k = rng.randrange(3)
        g = rng.choice(glue)
        texts.append("<think>x</think><answer>A</answer>" + (f"<glue>{g}</glue>" if g else ""))
        picked.append(truths[k])
        videos.append(f"/v/{rng.choice('ab')}.mp4")
    requests = hook.plan(texts, [t.to_json() for t in picked], [{"videos": [v]} for v in videos])
    rows, plans, request_of, distinct, seconds = _reference_plan(hook, texts, picked, videos)
    assert (requests.rows, requests.plans, requests.request_of, requests.distinct) == (
        rows,
        plans,
        request_of,
        distinct,
    )
    assert requests.span_seconds == seconds and len(distinct) > 4

    ids = [easyr1_tokenizer.encode(t, add_special_tokens=False) + [easyr1_tokenizer.eos_token_id] for t in texts[:8]]
    width = max(map(len, ids)) + 3
    padded = torch.tensor([x + [easyr1_tokenizer.pad_token_id] * (width - len(x)) for x in ids])
    mask = torch.tensor([[1.0] * len(x) + [0.0] * (width - len(x)) for x in ids])  # a float mask counts too
    assert hook.decode(padded, mask) == [easyr1_tokenizer.decode(x, skip_special_tokens=True) for x in ids]


def test_the_zoom_pass_plans_in_the_qwen3_vl_models_own_tokens(tiny_qwen3_processor):
    """The zoom hook reads the model's geometry from its processor: on the tiny Qwen3-VL (32-px tokens, temporal
    patch 2: 2,048 px a frame-token) the paper's 8..384 tokens a frame are 16,384..786,432 px. Spans (3, 5) and
    (4, 6) merge to 3 s; at 2 fps N = min(6, 256 / 8) = 6 frames at V_res = 256 / 6 tokens:
    int(256 / 6 · 2,048) = 87,381 px, decoded by qwen-vl-utils with patch size 16 (16 · its merge 2 = 32 px).
    (Qwen2.5-VL's 28-px tokens: 12,544..602,112 px and int(256 / 6 · 1,568) = 66,901 px, patch size 14.)"""
    options = ZoomOptions.from_section({"max_visual_tokens": 256, "fps": 2.0})
    hook = ZoomHook(options, tiny_qwen3_processor.tokenizer, tiny_qwen3_processor, coarse_fps=1.0)
    assert (hook.budget.min_frame_pixels, hook.budget.max_frame_pixels) == (16384, 786432)
    requests = hook.plan(TEXTS, truths_json(), MMD)
    plan = requests.plans[0]
    assert [(c.start, c.end, c.nframes) for c in plan.clips] == [(3.0, 6.0, 6)] and plan.frame_pixels == 87381
    batch = hook.zoom_batch(requests)
    spec = batch.non_tensor_batch["multi_modal_data"][0]["videos"][0]
    assert spec["image_patch_size"] == 16
    assert (spec["clips"][0]["min_pixels"], spec["clips"][0]["max_pixels"]) == (16384, 87381)
    assert (batch.meta_info["min_pixels"], batch.meta_info["max_pixels"]) == (16384, 786432)
