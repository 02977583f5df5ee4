"""Qwen2-VL / Qwen2.5-VL multimodal rotary positions (M-RoPE) of many sequences at once, for images.

The rule is Qwen's ``get_rope_index`` (transformers; EasyR1 copies it): text tokens advance one position each
on all three axes (time, height, width); an image of ``h × w`` merged patches placed at position ``p`` gives
its token ``(i, j)`` the positions ``(p, p + i, p + j)`` (an image has no time extent), and the next token
starts at ``p + max(h, w)``. Their loop costs tens of microseconds per image; this computes the same numbers
for a whole batch with a handful of vectorised passes (a multi-turn rollout step holds ~10⁵ images).

Shapes: ``N`` real tokens of all sequences laid end to end, ``B`` sequences, ``K`` images in sequence order.
"""

from __future__ import annotations

import numpy as np


def image_positions(lengths: np.ndarray, starts: np.ndarray, grids: np.ndarray) -> np.ndarray:
    """The three M-RoPE rows of ``B`` token sequences laid end to end.

    Args:
        lengths: (B,) tokens of each sequence (only real tokens: no padding).
        starts: (K,) index, in the concatenation, of each image's first placeholder token; images in order.
        grids: (K, 2) each image's merged-patch grid ``(h, w)``; the image holds ``h · w`` placeholder tokens.
    Returns:
        (3, N) int64: positions on the time, height and width axes; each sequence starts at 0.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    grids = np.asarray(grids, dtype=np.int64).reshape(-1, 2)
    n = int(lengths.sum())
    sizes = grids[:, 0] * grids[:, 1]
    if starts.size and (starts.min() < 0 or int((starts + sizes).max()) > n):
        raise ValueError("an image's placeholder tokens lie outside the sequences")
    if starts.size:
        ends = np.cumsum(lengths)
        if np.any(np.searchsorted(ends, starts, "right") != np.searchsorted(ends, starts + sizes - 1, "right")):
            raise ValueError("an image's placeholder tokens run past the end of its sequence")
    step = np.ones(n, dtype=np.int64)  # how far each token moves the position of the next one
    groups = []  # per distinct grid: its images' token indices (K_g, h·w) and row/column patterns
    for (h, w) in {tuple(g) for g in grids.tolist()}:
        mine = starts[(grids[:, 0] == h) & (grids[:, 1] == w)]
        tokens = mine[:, None] + np.arange(h * w)
        step[tokens] = 0
        step[mine + h * w - 1] = max(h, w)
        groups.append((mine, tokens, np.repeat(np.arange(h), w), np.tile(np.arange(w), h)))
    base = np.cumsum(step)
    base -= step  # exclusive: a token's position; constant over an image (its tokens step 0 until the last)
    first = np.cumsum(lengths) - lengths
    base -= np.repeat(base[first[lengths > 0]], lengths[lengths > 0])
    out = np.empty((3, n), dtype=np.int64)
    out[:] = base
    for mine, tokens, rows, cols in groups:
        at = base[mine][:, None]
        out[1, tokens] = at + rows
        out[2, tokens] = at + cols
    return out
