"""Which generated tokens belong to a block of the response, found from the tokenizer's own decoding.

A token belongs to a block when the characters it decodes to overlap one of the character ranges a range finder
gives for the decoded response (Zoom-Zero's ``<glue>…</glue>`` blocks, the
agent's ``<video_zoom>`` calls). Token character offsets come from decoding,
never from hard-coded token ids, so the result is right for any tokenizer. A response with holes in its mask
(a multi-turn exchange: sampled turns between observations) is read turn by turn: each run of generated
tokens is decoded on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch


def encode_rows(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    """``[tokenizer.encode(t, add_special_tokens=False) for t in texts]``, batched in a fast tokenizer's backend."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None:
        return tokenizer(texts, add_special_tokens=False)["input_ids"]
    return [e.ids for e in backend.encode_batch(texts, add_special_tokens=False)]


def decode_rows(tokenizer: Any, rows: list[list[int]], skip_special_tokens: bool) -> list[str]:
    """``[tokenizer.decode(r, skip_special_tokens=…) for r in rows]``, in one call to a fast tokenizer's backend.

    ``PreTrainedTokenizerFast.decode`` is the backend's decode plus an optional clean-up of spaces; with the
    clean-up off (Qwen's tokenizers) the backend's batch decoder gives the same strings, several times faster.
    """
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or getattr(tokenizer, "clean_up_tokenization_spaces", True):
        return tokenizer.batch_decode(rows, skip_special_tokens=skip_special_tokens)
    return backend.decode_batch(rows, skip_special_tokens=skip_special_tokens)


Ranges = Callable[[str], list[tuple[int, int]]]  # text -> character ranges [start, end) of the marked blocks


class TokenMasker:
    """Builds (bs, L) masks of the tokens inside the blocks ``ranges`` finds, for batches of generated ids.

    Fast path: the decoded pieces of single tokens (cached per id) concatenate to the decoded response,
    which holds for byte-level BPE on whole characters. Otherwise (a character split across tokens,
    tokenizers that strip spaces when decoding alone) offsets come from decoding every prefix.
    """

    def __init__(self, tokenizer, ranges: Ranges, skip_special_tokens: bool = False):
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self.ranges = ranges
        self._pieces: dict[int, str] = {}

    def _decode_pieces(self, ids: Sequence[int]) -> list[str]:
        missing = sorted({i for i in ids if i not in self._pieces})
        if missing:
            texts = self.tokenizer.batch_decode([[i] for i in missing], skip_special_tokens=self.skip_special_tokens)
            self._pieces.update(zip(missing, texts))
        return [self._pieces[i] for i in ids]

    def char_offsets(self, ids: Sequence[int], text: str) -> np.ndarray:
        """(n+1,) character offset of each token boundary in ``text`` (the decoding of ``ids``)."""
        pieces = self._decode_pieces(ids)
        if "".join(pieces) == text:
            return np.concatenate([[0], np.cumsum([len(p) for p in pieces])])
        prefixes = self.tokenizer.batch_decode(
            [list(ids[: k + 1]) for k in range(len(ids))], skip_special_tokens=self.skip_special_tokens
        )
        ends = np.maximum.accumulate(np.array([len(p) for p in prefixes] or [0]))
        return np.concatenate([[0], ends[: len(ids)]])

    def __call__(self, response_ids: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
        """Block mask for a padded batch.

        Args:
            response_ids: (bs, L) generated token ids. response_mask: (bs, L), 1 on generated tokens: a prefix
                of each row (EasyR1's single-turn layout), or several runs (the sampled turns of a multi-turn
                response; each run is decoded and searched on its own).
        Returns:
            (bs, L) bool, False wherever ``response_mask`` is 0.
        """
        mask_np = response_mask.detach().cpu().numpy().astype(bool)
        ids_np = response_ids.detach().cpu().numpy()
        runs = []  # (row, start, end)
        for i, row in enumerate(mask_np):
            edges = np.flatnonzero(np.diff(np.concatenate([[False], row, [False]]).astype(np.int8)))
            runs += [(i, int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
        rows = [ids_np[i, a:b].tolist() for i, a, b in runs]
        texts = decode_rows(self.tokenizer, rows, self.skip_special_tokens)
        mask = np.zeros(tuple(response_ids.shape), dtype=bool)
        for (i, a, b), ids, text in zip(runs, rows, texts):
            ranges = self.ranges(text)
            if not ranges:
                continue
            offsets = self.char_offsets(ids, text)
            starts, ends = offsets[:-1], offsets[1:]
            for lo, hi in ranges:
                mask[i, a:b] |= (starts < hi) & (ends > lo) & (ends > starts)
        return torch.from_numpy(mask).to(response_ids.device)
