import numpy as np
import pytest
import torch

from zoomzero_plugin.gvqa.advantages import group_normalize, grpo_advantage, token_adv


def test_group_normalize_uses_population_std():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0])
    out = group_normalize(r, ["u"] * 4, eps=0.0)
    std = np.std([1, 0, 0, 0])  # population: sqrt(3)/4
    assert torch.allclose(out, torch.tensor([0.75, -0.25, -0.25, -0.25]) / std)


def test_all_equal_groups_give_exact_zero_not_nan():
    r = torch.tensor([0.1, 0.1, 0.1, 0.7, 0.7, 0.3])
    out = group_normalize(r, np.array(["a", "a", "a", "b", "b", "c"], dtype=object))
    assert torch.equal(out, torch.zeros(6))
    # Without the rule: in float64, 0.1 + 0.1 + 0.1 = 0.30000000000000004, so the mean misses 0.1 by 1e-17 and
    # (r - mean) / (std + eps) is about -1e-11, not 0; with eps = 0 it is 0/0 = nan.
    r64 = torch.tensor([0.1, 0.1, 0.1], dtype=torch.float64)
    for eps in (1e-6, 0.0):
        assert torch.equal(group_normalize(r64, ["a"] * 3, eps=eps), torch.zeros(3)), eps


def test_a_group_one_ulp_apart_is_not_constant():
    """The threshold of the rule: values that differ at all are normalised, however small the spread."""
    up = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    d = up - 1.0  # 2**-23
    # population std of (0, 0, d) is d·√2/3 and the deviations are (−d/3, −d/3, 2d/3)
    for eps in (0.0, 1e-6):  # eps = 0: (−1/√2, −1/√2, √2); eps = 1e-6 (far above the std): about (−0.04, −0.04, 0.08)
        expected = torch.tensor([-d / 3, -d / 3, 2 * d / 3]) / (d * 2**0.5 / 3 + eps)
        out = group_normalize(torch.tensor([1.0, 1.0, up]), ["a"] * 3, eps=eps)
        assert torch.allclose(out, expected, rtol=1e-4) and out[2] > 0.07, eps


def test_vectorised_matches_per_group_loop_on_interleaved_groups():
    g = torch.Generator().manual_seed(0)
    scores = torch.rand(200, 3, generator=g).round(decimals=1)
    index = np.array([f"uid{i % 7}" for i in torch.randperm(200, generator=g).tolist()], dtype=object)
    out = group_normalize(scores, index, eps=1e-6)
    for uid in set(index):
        rows = np.flatnonzero(index == uid)
        x = scores[rows].double()
        expect = (x - x.mean(0)) / (x.std(0, unbiased=False) + 1e-6)
        expect[:, (x.max(0).values == x.min(0).values)] = 0
        assert torch.allclose(out[rows], expect.float(), atol=1e-5)


def test_token_adv_hand_computed_case():
    comps = {
        "format": torch.tensor([1.0, 1, 0, 0]),
        "iou": torch.tensor([0.5, 0, 0, 0.5]),
        "accuracy": torch.tensor([1.0, 0, 1, 0]),
        "zoom": torch.tensor([1.0, 1, 1, 1]),  # constant: contributes 0
    }
    glue = torch.tensor([[0, 1, 1, 0, 0]] * 4, dtype=torch.bool)
    mask = torch.tensor([[1, 1, 1, 1, 0]] * 4)
    adv, ret = token_adv(comps, glue, mask, ["p"] * 4, eps=0.0)
    a_glue = torch.tensor([2, 0, -2, 0]) / 3  # mean(format, zoom, iou)
    a_ans = torch.tensor([2, 0, 0, -2]) / 3  # mean(format, zoom, accuracy)
    assert torch.allclose(adv[:, 1], a_glue) and torch.allclose(adv[:, 2], a_glue)
    assert torch.allclose(adv[:, 0], a_ans) and torch.allclose(adv[:, 3], a_ans)
    assert torch.equal(adv[:, 4], torch.zeros(4))  # padding
    assert torch.equal(adv, ret)


def test_switched_off_components_drop_out_of_the_means():
    comps = {"format": torch.tensor([1.0, 0]), "accuracy": torch.tensor([0.0, 1]), "iou": torch.tensor([0.2, 0.2])}
    glue = torch.tensor([[1, 0], [1, 0]], dtype=torch.bool)
    adv, _ = token_adv(comps, glue, torch.ones(2, 2), ["p", "p"], eps=0.0)
    assert torch.allclose(adv[:, 0], torch.tensor([1.0, -1.0]) / 2)  # mean(format=±1, iou=0); no zoom
    assert torch.allclose(adv[:, 1], torch.tensor([0.0, 0.0]))  # mean(format=±1, accuracy=∓1)


def test_token_adv_requires_a_component_for_each_token_class():
    glue, mask = torch.zeros(2, 3, dtype=torch.bool), torch.ones(2, 3)
    with pytest.raises(ValueError, match="glue tokens"):
        token_adv({"accuracy": torch.ones(2)}, glue, mask, ["a", "a"])  # no glue-side component
    with pytest.raises(ValueError, match="for the other tokens; got components \\['iou'\\]"):
        token_adv({"iou": torch.tensor([1.0, 0.0])}, glue, mask, ["a", "a"])  # no answer-side one: NaN, were it kept
    # exactly one on each side: answer tokens learn from accuracy alone, (1 - 0.5) / 0.5 = +1 and -1
    adv, _ = token_adv(
        {"iou": torch.tensor([1.0, 0.0]), "accuracy": torch.tensor([0.0, 1.0])}, glue, mask, ["a", "a"], eps=0.0
    )
    assert torch.equal(adv, torch.tensor([[-1.0] * 3, [1.0] * 3]))


def test_grpo_baseline_broadcasts_one_advantage_per_response():
    adv, _ = grpo_advantage(
        torch.tensor([1.0, 0.0, 0.5, 0.5]), torch.tensor([[1, 1, 0]] * 4), ["a", "a", "b", "b"], eps=0
    )
    assert torch.allclose(adv, torch.tensor([[1.0, 1, 0], [-1, -1, 0], [0, 0, 0], [0, 0, 0]]))


def test_tensor_and_integer_indices_work():
    r = torch.tensor([1.0, 0.0, 3.0, 1.0])
    a = group_normalize(r, torch.tensor([7, 7, 9, 9]), eps=0)
    assert torch.allclose(a, torch.tensor([1.0, -1.0, 1.0, -1.0]))


def test_sample_std_on_a_hand_computed_group():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0])  # mean 1/4; squared deviations 9/16 + 3·1/16 = 12/16
    population = (12 / 16 / 4) ** 0.5  # sqrt(3)/4 ≈ 0.4330
    sample = (12 / 16 / 3) ** 0.5  # 1/2
    assert torch.allclose(
        group_normalize(r, ["u"] * 4, eps=0.0), torch.tensor([0.75, -0.25, -0.25, -0.25]) / population
    )
    assert torch.allclose(
        group_normalize(r, ["u"] * 4, eps=0.0, std="sample"), torch.tensor([0.75, -0.25, -0.25, -0.25]) / sample
    )
    # the two differ by sqrt(n / (n - 1)) = sqrt(4/3), nothing else
    ratio = group_normalize(r, ["u"] * 4, eps=0.0) / group_normalize(r, ["u"] * 4, eps=0.0, std="sample")
    assert torch.allclose(ratio, torch.full((4,), (4 / 3) ** 0.5))


def test_sample_std_matches_torch_std_and_a_lone_response_gets_zero():
    g = torch.Generator().manual_seed(1)
    scores = torch.rand(12, generator=g)
    index = ["a"] * 5 + ["b"] * 6 + ["c"]
    out = group_normalize(scores, index, eps=1e-6, std="sample")
    for rows in (slice(0, 5), slice(5, 11)):
        x = scores[rows].double()
        assert torch.allclose(out[rows], ((x - x.mean()) / (x.std() + 1e-6)).float(), atol=1e-6)
    assert out[11] == 0  # a group of one: no spread, advantage 0 (never NaN)
    with pytest.raises(ValueError, match="population"):
        group_normalize(scores, index, std="unbiased")


def test_token_adv_and_grpo_share_the_std_choice():
    comps = {"format": torch.tensor([1.0, 0, 0, 0]), "accuracy": torch.tensor([1.0, 0, 0, 0])}
    glue = torch.zeros(4, 2, dtype=torch.bool)
    glue[:, 0] = True
    mask = torch.ones(4, 2)
    adv, _ = token_adv(
        comps,
        glue,
        mask,
        ["p"] * 4,
        eps=0.0,
        std="sample",
        glue_components=("format",),
        answer_components=("accuracy",),
    )
    assert torch.allclose(adv[:, 0], torch.tensor([1.5, -0.5, -0.5, -0.5]))
    grpo, _ = grpo_advantage(torch.tensor([2.0, 0, 0, 0]), mask, ["p"] * 4, eps=0.0, std="sample")
    assert torch.allclose(grpo[:, 1], torch.tensor([1.5, -0.5, -0.5, -0.5]))
    grpo_pop, _ = grpo_advantage(torch.tensor([2.0, 0, 0, 0]), mask, ["p"] * 4, eps=0.0)
    assert torch.allclose(grpo_pop[:, 1], torch.tensor([0.75, -0.25, -0.25, -0.25]) / (3**0.5 / 4))
