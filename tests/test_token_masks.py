import pytest
import torch

from zoomzero_plugin.gvqa.glue_masks import GlueTokenMasker
from zoomzero_plugin.gvqa.parsing import glue_char_ranges


def reference_mask(tokenizer, ids):
    """Brute force: decode every prefix, mark tokens whose characters overlap a glue range."""
    text = tokenizer.decode(ids)
    ends = [len(tokenizer.decode(ids[: k + 1])) for k in range(len(ids))]
    starts = [0] + ends[:-1]
    ranges = glue_char_ranges(text)
    return [any(s < hi and e > lo and e > s for lo, hi in ranges) for s, e in zip(starts, ends)]


def pieces_to_ids(tokenizer, pieces):
    """Encode pieces separately so token boundaries fall at odd places inside the tags."""
    return [i for p in pieces for i in tokenizer(p, add_special_tokens=False).input_ids]


CASES = {
    "plain": ["<think>ok</think><answer>B</answer><glue>[(1.5, 2.0)]</glue>"],
    "odd_boundaries": ["<think>x</think><answer>B</answer><gl", "ue>[(1", ", 2)]</g", "lue", ">", "tail"],
    "truncated": ["<think>x</think><answer>A</answer><glue>[(1.0, 2"],
    "missing": ["<think>x</think><answer>A</answer> no spans"],
    "repeated": ["<glue>[(1, 2)]</glue>mid<glue>[(3, 4)]</glue>end"],
    "split_multibyte": ["<think>café 😀</think><answer>B</answer><glue>[(1, 2)]</glue>é"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mask_matches_brute_force_decoding(tiny_tokenizer, case):
    ids = pieces_to_ids(tiny_tokenizer, CASES[case])
    eos = tiny_tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tiny_tokenizer.pad_token_id
    length = len(ids) + 1
    batch = torch.tensor([ids + [eos, pad, pad], [pad] * (length + 2)])
    mask = torch.tensor([[1] * length + [0, 0], [1] + [0] * (length + 1)])
    got = GlueTokenMasker(tiny_tokenizer)(batch, mask)
    expect = reference_mask(tiny_tokenizer, ids + [eos])
    assert got[0, :length].tolist() == expect
    assert not got[0, length:].any() and not got[1].any()
    glue_text = tiny_tokenizer.decode([t for t, m in zip(ids, expect) if m])
    other_text = tiny_tokenizer.decode([t for t, m in zip(ids, expect) if not m])
    full = tiny_tokenizer.decode(ids)
    if "<glue>" in full:
        assert "<glue>" in glue_text and "glue" not in other_text
    else:
        assert not any(expect)


def test_odd_boundaries_really_are_odd(tiny_tokenizer):
    ids = pieces_to_ids(tiny_tokenizer, CASES["odd_boundaries"])
    tokens = [tiny_tokenizer.decode([i]) for i in ids]
    assert not any("<glue>" in t or "</glue>" in t for t in tokens)  # both tags are split across tokens
    mask = GlueTokenMasker(tiny_tokenizer)(torch.tensor([ids]), torch.ones(1, len(ids)))[0].tolist()
    marked = [i for i, m in enumerate(mask) if m]
    assert marked == list(range(marked[0], marked[-1] + 1))  # one contiguous run
    text = "".join(tokens[marked[0] : marked[-1] + 1])
    assert "<glue>[(1, 2)]</glue>" in text and "tail" not in text and "answer" not in text


def test_split_characters_use_the_prefix_fallback(tiny_tokenizer):
    masker = GlueTokenMasker(tiny_tokenizer)
    ids = pieces_to_ids(tiny_tokenizer, ["é<glue>[(1, 2)]</glue>"])
    pieces = masker._decode_pieces(ids)
    assert "".join(pieces) != tiny_tokenizer.decode(ids)  # é is two byte tokens
    offsets = masker.char_offsets(ids, tiny_tokenizer.decode(ids))
    assert offsets[-1] == len(tiny_tokenizer.decode(ids))
