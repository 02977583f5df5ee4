"""The batched M-RoPE positions equal Qwen's own ``get_rope_index`` (transformers' Qwen2.5-VL model), sequence by
sequence, on random text/image layouts; and hand-worked small cases."""

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.mrope import image_positions, vision_positions

MERGE = 2


def test_hand_worked_sequence():
    # text a b | image 2x3 | text c | image 1x1 | text d
    lengths = [2 + 6 + 1 + 1 + 1]
    out = image_positions(lengths, starts=[2, 9], grids=[(2, 3), (1, 1)])
    assert out[0].tolist() == [0, 1, 2, 2, 2, 2, 2, 2, 5, 6, 7]
    assert out[1].tolist() == [0, 1, 2, 2, 2, 3, 3, 3, 5, 6, 7]
    assert out[2].tolist() == [0, 1, 2, 3, 4, 2, 3, 4, 5, 6, 7]


def test_sequences_restart_at_zero_and_empty_ones_are_allowed():
    out = image_positions([3, 0, 2], starts=[3], grids=[(1, 2)])
    assert out.tolist() == [[0, 1, 2, 0, 0], [0, 1, 2, 0, 0], [0, 1, 2, 0, 1]]


def test_an_image_outside_or_across_sequences_is_refused():
    with pytest.raises(ValueError, match="outside"):
        image_positions([3], starts=[2], grids=[(1, 2)])
    with pytest.raises(ValueError, match="past the end"):
        image_positions([3, 3], starts=[2], grids=[(1, 2)])


def layouts():
    """Per sequence: a list of items, each an int (a run of that many text tokens) or (h, w) (an image)."""
    item = st.one_of(st.integers(1, 5), st.tuples(st.integers(1, 4), st.integers(1, 4)))
    return st.lists(st.lists(item, min_size=0, max_size=6), min_size=1, max_size=4)


def build(layout, ids):
    """input_ids of one sequence with Qwen's vision markers, and its image grids in patches (t, 2h, 2w)."""
    tokens, grids, starts = [], [], []
    for item in layout:
        if isinstance(item, int):
            tokens += [ids["text"]] * item
        else:
            h, w = item
            tokens.append(ids["start"])
            starts.append(len(tokens))
            tokens += [ids["image"]] * (h * w)
            tokens.append(ids["end"])
            grids.append((1, h * MERGE, w * MERGE))
    return tokens, grids, starts


def rope_index(model, input_ids, image_grid_thw, image_token):
    """transformers' ``get_rope_index`` by keyword: 5.x also asks each token's modality (``mm_token_type_ids``)."""
    kwargs = dict(input_ids=input_ids, image_grid_thw=image_grid_thw, attention_mask=torch.ones_like(input_ids))
    if "mm_token_type_ids" in inspect.signature(model.get_rope_index).parameters:
        kwargs["mm_token_type_ids"] = (input_ids == image_token).int()
    return model.get_rope_index(**kwargs)


@pytest.fixture(scope="module")
def qwen(tiny_model):
    tokenizer_ids = tiny_model.config
    return tiny_model.model, {
        "text": 100,
        "start": tokenizer_ids.vision_start_token_id,
        "image": tokenizer_ids.image_token_id,
        "end": tokenizer_ids.vision_end_token_id,
    }


@settings(max_examples=60)
@given(layout=layouts())
def test_equals_transformers_get_rope_index(qwen, layout):
    model, ids = qwen
    lengths, starts, grids, expected = [], [], [], []
    offset = 0
    for seq in layout:
        tokens, seq_grids, seq_starts = build(seq, ids)
        lengths.append(len(tokens))
        starts += [offset + s for s in seq_starts]
        grids += [(h // MERGE, w // MERGE) for _, h, w in seq_grids]
        offset += len(tokens)
        if not tokens:
            continue
        input_ids = torch.tensor([tokens])
        thw = torch.tensor(seq_grids) if seq_grids else None
        positions, _ = rope_index(model, input_ids, thw, ids["image"])
        expected.append(positions[:, 0].numpy())
    got = image_positions(lengths, np.array(starts, dtype=np.int64), np.array(grids, dtype=np.int64).reshape(-1, 2))
    want = np.concatenate(expected, axis=1) if expected else np.zeros((3, 0), dtype=np.int64)
    np.testing.assert_array_equal(got, want)


def test_a_video_block_advances_time_by_its_own_offsets():
    """text a | video 3 temporal patches x 1x2, offsets (0, 4, 8) | text b: by hand, the next position is
    p + max(8, 0, 1) + 1 = 1 + 9 = 10."""
    out = vision_positions([1 + 6 + 1], starts=[1], grids=[(3, 1, 2)], times={0: [0, 4, 8]})
    assert out[0].tolist() == [0, 1, 1, 5, 5, 9, 9, 10]
    assert out[1].tolist() == [0, 1, 1, 1, 1, 1, 1, 10]
    assert out[2].tolist() == [0, 1, 2, 1, 2, 1, 2, 10]
    with pytest.raises(ValueError, match="temporal offsets"):
        vision_positions([8], starts=[1], grids=[(3, 1, 2)])
