"""The actor's log-probs over the vocabulary vLLM samples from (the seam ``fsdp.prepare_model_outputs``), run through
verl's own ``FSDPEngineWithLMHead.prepare_model_outputs`` on logits whose numbers are worked by hand.

One position's distribution over a 6-row vocabulary: tokens 0 and 1 are text, 2 and 3 the image and video placeholders,
4 and 5 padding rows past ``len(tokenizer) == 4``. verl's vLLM server samples from tokens 0 and 1 only; they hold
0.5 + 0.3 = 0.8 of the mass, so the log-probs it reports are log(0.5 / 0.8) = log 0.625 and log(0.3 / 0.8) = log 0.375,
where verl's actor alone gives log 0.5 and log 0.3: a gap of −log 0.8 = 0.223 nats, the log(1 − p) of docs/verl.md.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

P = [0.5, 0.3, 0.1, 0.05, 0.03, 0.02]  # text, text, <|image_pad|>, <|video_pad|>, padding, padding
IMAGE, VIDEO, TOKENS = 2, 3, 4  # the placeholder ids and len(tokenizer)
SEQUENCE = [1, 0, 1]  # one sample; verl's labels are it rolled by one: 0, 1, 1 (the last wraps around)
LABELS = [0, 1, 1]
# log 0.625 = −0.4700036, log 0.375 = −0.9808293
MASKED = [math.log(0.625), math.log(0.375), math.log(0.375)]
# −(0.625 log 0.625 + 0.375 log 0.375) = 0.2937522 + 0.3678110
MASKED_ENTROPY = 0.6615632
# −Σ p log p over all six: 0.3465736 + 0.3611918 + 0.2302585 + 0.1497866 + 0.1051968 + 0.0782405
VERL_ENTROPY = 1.2712478
SEAM = "fsdp.prepare_model_outputs"


@pytest.fixture(scope="module")
def fsdp():
    import verl.workers.engine.fsdp.transformer_impl as fsdp

    import zoomzero_plugin.hosts.verl.plugin  # noqa: F401 - the entry point: verl imported it already

    return fsdp


def engine(fsdp, vision: bool = True, processor: object = "placeholders"):
    """verl's FSDP engine with only what ``prepare_model_outputs`` reads: its entropy settings, no Ulysses, and a model
    config (a vision model's, or not) whose processor names the image and video tokens (or none)."""
    from verl.utils.torch_functional import entropy_from_logits

    e = object.__new__(fsdp.FSDPEngineWithLMHead)
    e.engine_config = SimpleNamespace(entropy_checkpointing=False, entropy_from_logits_with_chunking=False)
    e.compute_entropy_from_logits = entropy_from_logits
    e.use_ulysses_sp = False
    if processor == "placeholders":
        processor = SimpleNamespace(image_token_id=IMAGE, video_token_id=VIDEO)
    hf_config = SimpleNamespace(vision_config={}) if vision else SimpleNamespace()
    e.model_config = SimpleNamespace(hf_config=hf_config, processor=processor, tokenizer=[None] * TOKENS, path="tiny")
    return e


def forward(fsdp, e, padding_free: bool, temperature: float = 1.0, fused: bool = False, logits=None):
    """verl's prepare_model_outputs on SEQUENCE with every position's logits log P (or ``logits``): (log-probs,
    entropy) of the sampled tokens, as the actor's loss and old_log_prob read them."""
    from transformers.modeling_outputs import CausalLMOutputWithPast
    from verl.utils import tensordict_utils as tu

    ids = torch.tensor(SEQUENCE)
    if logits is None:
        logits = torch.tensor(P).log().expand(len(SEQUENCE), len(P)).clone()
    micro_batch = tu.get_tensordict(
        {"input_ids": torch.nested.nested_tensor([ids], layout=torch.jagged)},
        non_tensor_dict=dict(use_remove_padding=padding_free, calculate_entropy=True, use_fused_kernels=fused),
    )
    args = {"temperature_is_one": temperature == 1.0, "input_ids_rmpad_rolled": torch.roll(ids, -1)}
    if padding_free:
        args.update(temperature_rmpad=torch.full((len(SEQUENCE),), temperature), pad_size=0)
    else:
        args.update(temperature=torch.tensor([temperature]))
    output = CausalLMOutputWithPast(logits=logits.unsqueeze(0))
    out = fsdp.FSDPEngineWithLMHead.prepare_model_outputs(e, output, args, micro_batch, None)
    return out["log_probs"].values(), out["entropy"].values()


@pytest.mark.parametrize("padding_free", [False, True], ids=["padded", "padding-free"])
def test_the_actor_scores_a_sampled_token_over_what_vllm_samples_from(fsdp, padding_free):
    log_probs, entropy = forward(fsdp, engine(fsdp), padding_free)
    assert log_probs.tolist() == pytest.approx(MASKED, abs=1e-6)
    assert entropy.tolist() == pytest.approx([MASKED_ENTROPY] * 3, abs=1e-6)


def test_verl_alone_scores_it_over_the_whole_vocabulary(fsdp):
    """What the seam changes: verl's own function (``__wrapped__``) gives log 0.5 and log 0.3, 0.223 nats below."""
    original = fsdp.FSDPEngineWithLMHead.prepare_model_outputs.__wrapped__
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fsdp.FSDPEngineWithLMHead, "prepare_model_outputs", original)
        log_probs, entropy = forward(fsdp, engine(fsdp), padding_free=False)
    assert log_probs.tolist() == pytest.approx([math.log(0.5), math.log(0.3), math.log(0.3)], abs=1e-6)
    assert entropy.tolist() == pytest.approx([VERL_ENTROPY] * 3, abs=1e-6)
    assert (torch.tensor(MASKED) - log_probs).tolist() == pytest.approx([-math.log(0.8)] * 3, abs=1e-6)


def test_a_temperature_divides_the_logits_and_the_masked_ones_stay_out(fsdp):
    """At temperature 0.5 vLLM samples tokens 0 and 1 in proportion 0.5² : 0.3² = 0.25 : 0.09: log(0.25 / 0.34) =
    −0.3074847 and log(0.09 / 0.34) = −1.3291360; the masked logits, divided by 0.5 too, stay 2e4 below."""
    log_probs, _ = forward(fsdp, engine(fsdp), padding_free=False, temperature=0.5)
    assert log_probs.tolist() == pytest.approx([-0.3074847, -1.3291360, -1.3291360], abs=1e-6)


def test_the_gradient_is_that_of_the_sampled_distribution(fsdp):
    """−log p(label) over tokens 0 and 1: its gradient is softmax − one-hot there, 0 on the masked rows. Position 0
    (label 0): (0.625 − 1, 0.375, 0, 0, 0, 0); positions 1 and 2 (label 1): (0.625, 0.375 − 1, 0, 0, 0, 0)."""
    base = torch.tensor(P).log().expand(len(SEQUENCE), len(P)).clone().requires_grad_()
    log_probs, _ = forward(fsdp, engine(fsdp), padding_free=False, logits=base * 1.0)  # not a leaf, as a model's
    (-log_probs.sum()).backward()
    expected = [[-0.375, 0.375, 0, 0, 0, 0], [0.625, -0.625, 0, 0, 0, 0], [0.625, -0.625, 0, 0, 0, 0]]
    assert base.grad.tolist() == [pytest.approx(row, abs=1e-6) for row in expected]


def test_a_text_only_model_is_left_as_verl_scores_it(fsdp):
    log_probs, _ = forward(fsdp, engine(fsdp, vision=False, processor=None), padding_free=False)
    assert log_probs.tolist() == pytest.approx([math.log(0.5), math.log(0.3), math.log(0.3)], abs=1e-6)


def test_fused_kernels_are_refused_naming_the_option(fsdp):
    from zoomzero_plugin.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        forward(fsdp, engine(fsdp), padding_free=True, fused=True)
    message = str(refused.value)
    assert "\n" not in message and message.endswith("set actor_rollout_ref.model.use_fused_kernels=false")


def test_a_vision_model_without_placeholder_ids_is_refused(fsdp):
    from zoomzero_plugin.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^tiny is a vision model but its processor names no image or video token"):
        forward(fsdp, engine(fsdp, processor=None), padding_free=False)


def test_the_ids_are_those_verls_vllm_server_bans_for_the_tiny_model(verl_model_dir):
    """The server passes ``get_vision_placeholder_token_ids(model_config.processor)`` and ``len(model_config.
    tokenizer)``; the seam reads the same model config: the tiny model's <|image_pad|> and <|video_pad|>."""
    from verl.utils import tensordict_utils as tu
    from verl.workers.config.model import HFModelConfig

    from zoomzero_plugin.hosts.verl.sampled_vocab import sampled_vocabulary, vision_model

    config = HFModelConfig(path=str(verl_model_dir))
    tok = config.tokenizer
    placeholders, sampled = sampled_vocabulary(SimpleNamespace(model_config=config), tu.get_tensordict({}))
    assert vision_model(config) and sampled == len(tok)
    assert placeholders == [tok.convert_tokens_to_ids("<|image_pad|>"), tok.convert_tokens_to_ids("<|video_pad|>")]


def test_the_seam_is_declared_and_wraps_verls_method(fsdp):
    from zoomzero_plugin.hosts.verl.seams import SEAMS, TABLE

    seam = TABLE.named(SEAM)
    assert seam in SEAMS and seam.upstream  # always installed; a verl bug worth reporting
    assert TABLE.status(seam, import_modules=True)[0] == "patched"
    wrapper = fsdp.FSDPEngineWithLMHead.prepare_model_outputs
    assert getattr(wrapper, "__zoomzero_seam__", None) == SEAM
    assert wrapper.__wrapped__.__module__ == "verl.workers.engine.fsdp.transformer_impl"
    # the critic's value head keeps its own method
    assert getattr(fsdp.FSDPEngineWithValueHead.prepare_model_outputs, "__zoomzero_seam__", None) is None


def test_a_recipe_with_fused_kernels_is_refused_before_anything_starts():
    from zoomzero_plugin.hosts.verl.recipe import compose, find, plugin_problems
    from zoomzero_plugin.hosts.verl.sampled_vocab import FUSED_PROBLEM

    for name in ("zoomzero.yaml", "videozoomer.yaml"):
        assert FUSED_PROBLEM not in plugin_problems(compose(find(name)))
        assert FUSED_PROBLEM in plugin_problems(compose(find(name), ["actor_rollout_ref.model.use_fused_kernels=true"]))
