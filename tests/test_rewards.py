import json

import pytest

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.gvqa_reward import REWARD_TYPE, compute_score
from zoomzero_plugin.gvqa.reward import COMPONENTS, RewardConfig, score_response

TRUTH = GroundTruth.parse(
    {"answer": "B", "options": ["red", "green", "blue", "yellow"], "spans": [[3, 5]], "duration": 12, "qid": "v1-q0"}
)


def resp(letter="B", glue="[(3, 5)]"):
    return f"<think>see <time>(3, 5)</time></think><answer>{letter}</answer><glue>{glue}</glue>"


def test_perfect_response_scores_one_everywhere():
    s = score_response(resp(), TRUTH, RewardConfig(components=COMPONENTS), zoom_answer="B")
    assert s == {"format": 1.0, "iou": 1.0, "accuracy": 1.0, "zoom": 1.0, "overall": 1.0}


def test_components_are_independent():
    s = score_response(
        resp("C", "[(4, 7)]"), TRUTH, RewardConfig(components=("format", "iou", "accuracy", "zoom")), zoom_answer="B"
    )
    assert s["format"] == 1.0
    assert s["iou"] == pytest.approx(1 / 4)  # overlap (4,5)=1, union (3,7)=4
    assert s["accuracy"] == 0.0
    assert s["zoom"] == 1.0
    assert s["overall"] == pytest.approx((1 + 0.25 + 0 + 1) / 4)


def test_missing_glue_gives_zero_iou_and_format_but_keeps_accuracy():
    s = score_response("<think>x</think><answer>B</answer>", TRUTH)
    assert (s["format"], s["iou"], s["accuracy"]) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize("zoom_answer, zoom", [("B", 1.0), ("A", 0.0), ("D", 0.0), (None, 0.0)])
def test_zoom_reward_is_the_zoom_passs_own_answer(zoom_answer, zoom):
    """The coarse answer is right (B) in every case: only the fine pass's letter decides the zoom reward."""
    cfg = RewardConfig(components=("accuracy", "zoom"))
    s = score_response(resp("B"), TRUTH, cfg, zoom_answer=zoom_answer)
    assert s == {"accuracy": 1.0, "zoom": zoom, "overall": (1.0 + zoom) / 2}
    wrong_coarse = score_response(resp("C"), TRUTH, cfg, zoom_answer=zoom_answer)
    assert wrong_coarse == {"accuracy": 0.0, "zoom": zoom, "overall": zoom / 2}


def test_zoom_without_answer_is_zero_and_tool_is_no_zoom_zero_component():
    """The tool bonus is VideoZoomer's (zoomzero.agent.reward); Zoom-Zero's reward has no producer of tool calls."""
    cfg = RewardConfig(components=("accuracy", "zoom"))
    assert score_response(resp("A"), TRUTH, cfg, zoom_answer=None) == {"accuracy": 0.0, "zoom": 0.0, "overall": 0.0}
    with pytest.raises(ValueError, match=r"unknown reward components \['tool'\]"):
        RewardConfig(components=("accuracy", "tool"))


def test_weights_and_normalisation():
    weights = {"accuracy": 0.9, "format": 0.1}
    s = score_response("<answer>B</answer>", TRUTH, RewardConfig(("format", "accuracy"), weights, normalize=False))
    assert s["overall"] == pytest.approx(0.9)
    s = score_response(resp(), TRUTH, RewardConfig(("format", "iou"), {"format": 1, "iou": 3}))
    assert s["overall"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(components=("format", "bogus")), "unknown reward components"),
        (dict(components=("format", "accuracy"), weights={"acuracy": 0.9}), r"unknown reward components \['acuracy'\]"),
        (dict(components=()), "at least one"),
        (dict(components=("format",), weights={"format": -1}), ">= 0"),
        (dict(components=("format",), weights={"format": 0}), "sum to 0"),
    ],
)
def test_bad_reward_config_is_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RewardConfig(**kwargs)


def test_a_components_string_drops_empty_names():
    assert RewardConfig.from_kwargs("format,iou,").components == ("format", "iou")  # a trailing comma
    assert RewardConfig.from_kwargs(" format , ,accuracy").components == ("format", "accuracy")
    assert RewardConfig.from_kwargs("").components == ("format", "iou", "accuracy")  # nothing named: the default


def test_ground_truth_round_trip_and_errors():
    assert GroundTruth.parse(TRUTH.to_json()) == TRUTH
    gt = GroundTruth.parse({"answer": "(c)", "options": ["a", "b", "c"], "duration": 5, "qid": 1, "source": "x"})
    assert gt.answer == "C" and gt.spans == () and gt.extra == {"source": "x"}
    for bad, msg in [
        ("not json", "not JSON"),
        ({"answer": "E", "options": ["a", "b"], "duration": 3, "qid": "q"}, "not a letter"),
        ({"answer": "A", "options": ["a"], "duration": 0, "qid": "q"}, "positive"),
        ({"answer": "A", "options": ["a"], "duration": 5, "qid": "q", "spans": [[4, 2]]}, "invalid"),
        ({"options": ["a"]}, "lacks"),
    ]:
        with pytest.raises(ValueError, match=msg):
            GroundTruth.parse(bad)


def test_batch_reward_function_follows_easyr1_convention():
    assert REWARD_TYPE == "batch"
    inputs = [
        {"response": resp(), "response_length": 30, "ground_truth": TRUTH.to_json(), "zoom_answer": "B"},
        {"response": "junk", "response_length": 2, "ground_truth": TRUTH.to_json()},
    ]
    out = compute_score(inputs, components=["format", "iou", "accuracy", "zoom"], weights={"zoom": 2})
    assert out[0] == {"format": 1.0, "iou": 1.0, "accuracy": 1.0, "zoom": 1.0, "overall": 1.0}
    assert out[1]["overall"] == 0.0 and set(out[1]) == {"format", "iou", "accuracy", "zoom", "overall"}
    with pytest.raises(ValueError, match="reward input 0"):
        compute_score([{"response": "x", "ground_truth": json.dumps({"answer": "A"})}])
