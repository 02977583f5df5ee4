"""The verl bugs the host works around, shown on verl's own functions: the original fails, the seam's wrapper works."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="module")
def qwen(verl_model_dir):
    from transformers import Qwen2_5_VLForConditionalGeneration

    return Qwen2_5_VLForConditionalGeneration.from_pretrained(verl_model_dir, torch_dtype=torch.float32).eval()


def test_a_batch_without_images_or_videos_gets_its_text_embeddings(qwen):
    """verl's _get_input_embeds on a text-only batch runs the vision tower on dummy pixels and adds 0 x its mean; under
    transformers 5.9 the tower returns a ModelOutput, and .mean() fails. Wrapped: the text's own embeddings."""
    import verl.models.transformers.qwen2_vl as qwen2_vl

    import zoomzero_plugin.hosts.verl.plugin  # noqa: F401 - the entry point: verl imported it already

    wrapped = qwen2_vl._get_input_embeds
    assert getattr(wrapped, "__zoomzero_seam__", None) == "qwen2_vl._get_input_embeds"
    ids = torch.tensor([[5, 6, 7, 8]])
    mask = torch.ones_like(ids)
    with pytest.raises(AttributeError, match="mean"):
        wrapped.__wrapped__(qwen.model, ids, mask)
    with torch.no_grad():
        embeds, out_mask = wrapped(qwen.model, ids, mask)
    assert torch.equal(embeds, qwen.model.get_input_embeddings()(ids)) and torch.equal(out_mask, mask)
    assert isinstance(qwen.model.visual, torch.nn.Module) and "Pooled" not in type(qwen.model.visual).__name__
