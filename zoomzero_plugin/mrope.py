"""Qwen-VL multimodal rotary positions (M-RoPE) of many sequences at once: images and video blocks.

The rule is Qwen's ``get_rope_index`` (transformers' and vLLM's, for Qwen2-VL, Qwen2.5-VL and Qwen3-VL; EasyR1 copies
it): text tokens advance one position each on all three axes (time, height, width); a vision block of ``t × h × w``
merged patches placed at position ``p`` gives its token ``(k, i, j)`` the positions ``(p + τ_k, p + i, p + j)``, and
the next token starts one past the block's largest position, ``p + max(τ_{t-1}, h − 1, w − 1) + 1``. An image is
a block with ``t = 1`` (``τ = 0``); a Qwen2.5-VL video is one block whose temporal offsets ``τ_k`` follow its
seconds per temporal patch; a Qwen3-VL video is one ``t = 1`` block per temporal patch, each after its timestamp
text. Their loop costs tens of microseconds per image; this computes the same numbers for a whole batch with a
handful of vectorised passes (a multi-turn rollout step holds ~10⁵ images).

Shapes: ``N`` real tokens of all sequences laid end to end, ``B`` sequences, ``K`` blocks in sequence order.
"""

from __future__ import annotations

import inspect

import numpy as np


def image_positions(lengths: np.ndarray, starts: np.ndarray, grids: np.ndarray) -> np.ndarray:
    """The three M-RoPE rows of ``B`` token sequences laid end to end, whose vision blocks are all images.

    Args:
        lengths: (B,) tokens of each sequence (only real tokens: no padding).
        starts: (K,) index, in the concatenation, of each image's first placeholder token; images in order.
        grids: (K, 2) each image's merged-patch grid ``(h, w)``; the image holds ``h · w`` placeholder tokens.
    Returns:
        (3, N) int64: positions on the time, height and width axes; each sequence starts at 0.
    """
    return vision_positions(lengths, starts, grids)


def vision_positions(
    lengths: np.ndarray, starts: np.ndarray, grids: np.ndarray, times: dict[int, np.ndarray] | None = None
) -> np.ndarray:
    """The three M-RoPE rows of ``B`` token sequences laid end to end, with images and video blocks.

    Args:
        lengths: (B,) tokens of each sequence (only real tokens: no padding).
        starts: (K,) index, in the concatenation, of each block's first placeholder token; blocks in order.
        grids: (K, 2) image grids ``(h, w)``, or (K, 3) block grids ``(t, h, w)``; a block holds ``t · h · w`` tokens.
        times: for each block with ``t > 1`` (by its index in ``starts``): its ``t`` temporal offsets ``τ`` (int).
    Returns:
        (3, N) int64: positions on the time, height and width axes; each sequence starts at 0.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    grids = np.asarray(grids, dtype=np.int64)
    grids = (
        grids.reshape(-1, 3)
        if grids.size and grids.shape[-1] == 3
        else np.column_stack([np.ones(grids.size // 2, dtype=np.int64), grids.reshape(-1, 2)])
    )
    times = dict(times or {})
    if any(t > 1 and k not in times for k, t in enumerate(grids[:, 0].tolist())):
        raise ValueError("a block of several temporal patches needs its temporal offsets (times)")
    n = int(lengths.sum())
    sizes = grids.prod(-1)
    if starts.size and (starts.min() < 0 or int((starts + sizes).max()) > n):
        raise ValueError("an image's placeholder tokens lie outside the sequences")
    if starts.size:
        ends = np.cumsum(lengths)
        if np.any(np.searchsorted(ends, starts, "right") != np.searchsorted(ends, starts + sizes - 1, "right")):
            raise ValueError("an image's placeholder tokens run past the end of its sequence")
    step = np.ones(n, dtype=np.int64)  # how far each token moves the position of the next one
    groups = []  # per distinct grid: its blocks' token indices (K_g, t·h·w) and time/row/column patterns
    single = grids[:, 0] == 1
    for h, w in {tuple(g) for g in grids[single, 1:].tolist()}:
        mine = starts[single & (grids[:, 1] == h) & (grids[:, 2] == w)]
        tokens = mine[:, None] + np.arange(h * w)
        step[tokens] = 0
        step[mine + h * w - 1] = max(h, w)
        groups.append((mine, tokens, None, np.repeat(np.arange(h), w), np.tile(np.arange(w), h)))
    for k in np.flatnonzero(~single).tolist():  # video blocks of several temporal patches (a few per sequence)
        t, h, w = grids[k].tolist()
        tau = np.asarray(times[k], dtype=np.int64).reshape(-1)
        if tau.size != t:
            raise ValueError(f"block {k}: {tau.size} temporal offsets for {t} temporal patches")
        mine = starts[k : k + 1]
        tokens = mine[:, None] + np.arange(t * h * w)
        step[tokens] = 0
        step[mine + t * h * w - 1] = max(int(tau[-1]), h - 1, w - 1) + 1
        groups.append(
            (mine, tokens, np.repeat(tau, h * w), np.tile(np.repeat(np.arange(h), w), t), np.tile(np.arange(w), t * h))
        )
    base = np.cumsum(step)
    base -= step  # exclusive: a token's position; constant over an image (its tokens step 0 until the last)
    first = np.cumsum(lengths) - lengths
    base -= np.repeat(base[first[lengths > 0]], lengths[lengths > 0])
    out = np.empty((3, n), dtype=np.int64)
    out[:] = base
    for mine, tokens, taus, rows, cols in groups:
        at = base[mine][:, None]
        if taus is not None:  # an image's time position is the block's own (already there)
            out[0, tokens] = at + taus
        out[1, tokens] = at + rows
        out[2, tokens] = at + cols
    return out


def qwen2_positions(
    input_ids: np.ndarray,
    attention_mask: np.ndarray,
    image_token: int,
    video_token: int,
    image_grids: np.ndarray | None,
    video_grids: np.ndarray | None,
    seconds_per_grid: np.ndarray | None,
    tokens_per_second: float,
    merge_size: int = 2,
) -> np.ndarray:
    """Qwen2-VL / Qwen2.5-VL M-RoPE positions of a padded batch, as vLLM computes them while sampling.

    A video's temporal offsets are ``⌊k · second_per_grid_t · tokens_per_second⌋`` (float64, vLLM's rule), so a clip
    sampled at 8 fps (``second_per_grid_t = temporal_patch / 8``) keeps its own timing; without ``seconds_per_grid``
    every video counts as 2 fps (``1.0`` s per grid, vLLM's default). Text after a block starts one past the block's
    largest position on any axis.

    Args:
        input_ids: (B, L) token ids, each vision item a run of its placeholder tokens (expanded).
        attention_mask: (B, L) 1 for real tokens; padding gets position 1 on every axis (transformers' convention).
        image_grids, video_grids: (I, 3) and (V, 3) ``(t, h, w)`` patch grids before the ``merge_size``² merge, in
            sequence order over the whole batch; ``seconds_per_grid``: (V,) seconds per temporal patch of each video.
    Returns:
        (3, B, L) int64. ValueError when the placeholders and the grids disagree.
    """
    input_ids, mask = np.asarray(input_ids), np.asarray(attention_mask).astype(bool)
    real = input_ids[mask]
    grids = {
        image_token: list(np.asarray(image_grids if image_grids is not None else [], dtype=np.int64).reshape(-1, 3)),
        video_token: list(np.asarray(video_grids if video_grids is not None else [], dtype=np.int64).reshape(-1, 3)),
    }
    seconds = list(np.asarray(seconds_per_grid if seconds_per_grid is not None else [], dtype=np.float64).reshape(-1))
    used = {image_token: 0, video_token: 0}
    starts, blocks, times = [], [], {}
    k, n = 0, len(real)
    while k < n:
        token = int(real[k])
        if token not in used:
            k += 1
            continue
        if used[token] >= len(grids[token]):
            raise ValueError(f"more {'image' if token == image_token else 'video'} placeholders than grids")
        t, h, w = (int(x) for x in grids[token][used[token]])
        if token == video_token:
            step = (seconds[used[token]] if used[token] < len(seconds) else 1.0) * float(tokens_per_second)
            times[len(blocks)] = (np.arange(t, dtype=np.float64) * step).astype(np.int64)
        used[token] += 1
        starts.append(k)
        blocks.append((t, h // merge_size, w // merge_size))
        k += t * (h // merge_size) * (w // merge_size)
    if any(used[tok] != len(grids[tok]) for tok in used):
        raise ValueError(
            f"{used[image_token]} images and {used[video_token]} videos in the tokens, "
            f"{len(grids[image_token])} and {len(grids[video_token])} grids"
        )
    flat = vision_positions(mask.sum(-1), np.asarray(starts, dtype=np.int64), np.asarray(blocks).reshape(-1, 3), times)
    out = np.ones((3, *input_ids.shape), dtype=np.int64)
    out[:, mask] = flat
    return out


def model_positions(model, full, batch: dict):
    """A Qwen-VL model's M-RoPE positions (3, B, L) of the token ids ``full``, with ``batch``'s attention mask and
    grids: Qwen2.5-VL's by :func:`qwen2_positions`, as vLLM samples (any transformers), else the model's own rule."""
    import torch

    config = model.config
    if config.model_type != "qwen2_5_vl":  # Qwen3-VL: its timestamps are text; its own rule
        kwargs = {"video_grid_thw": batch.get("video_grid_thw"), "image_grid_thw": batch.get("image_grid_thw")}
        if "mm_token_type_ids" in inspect.signature(model.model.get_rope_index).parameters:  # transformers 5
            kwargs["mm_token_type_ids"] = (full == config.image_token_id) * 1 + (full == config.video_token_id) * 2
        return model.model.get_rope_index(input_ids=full, attention_mask=batch["attention_mask"], **kwargs)[0]
    grid = lambda key: None if key not in batch else batch[key].numpy()  # noqa: E731
    ids, mask, vision = full.numpy(), batch["attention_mask"].numpy(), config.vision_config
    return torch.from_numpy(
        qwen2_positions(
            ids,
            mask,
            config.image_token_id,
            config.video_token_id,
            grid("image_grid_thw"),
            grid("video_grid_thw"),
            grid("second_per_grid_ts"),
            vision.tokens_per_second,
            vision.spatial_merge_size,
        )
    )
