"""A multi-turn batch as EasyR1's actor, reference and reward manager expect it, with its numbers right.

A conversation (:mod:`.conversation`) is a first prompt and a response made of pieces: turns the policy sampled, and
tokens it did not (observations: a tool's text and images, the turn markers around them). :func:`assemble` lays a
batch of them out as EasyR1's ``vLLMRollout`` lays out single-turn responses, with these differences:

- ``response_mask`` is 1 on sampled tokens only (loss, KL and advantages), 0 on observation tokens and padding;
  ``attention_mask`` is 1 on every real token, so the training forward reads the observations;
- each image placeholder of the raw ids (one token, as vLLM reads them) becomes the ``h · w`` placeholder tokens
  the processor expands it to, each video placeholder the tokens vLLM replaces it with (``VideoLayout``: its
  pads, and for Qwen3-VL the timestamp text between its temporal patches), and every sample carries its own media
  (``multi_modal_data``: the first prompt's images, then each observation's, in order; videos likewise) with a
  ``media_uid`` that names exactly those media (samples that saw the same media, e.g. the overview only, share it
  and EasyR1 processes them once);
- ``position_ids`` are recomputed over the whole sequence with Qwen-VL's M-RoPE (:mod:`zoomzero_plugin.mrope`),
  the positions the sampler used, so training log-probs equal sampling log-probs (a linear continuation of the
  prompt's positions, EasyR1's single-turn rule, would be wrong after the first image in a response).

Two seams keep EasyR1 right on such batches: :func:`wrap_process_multi_modal_inputs` (EasyR1 processes one
sample's media per ``uid`` and gives it to all ``n`` samples of the prompt; here each sample's ``media_uid`` is the
key; and EasyR1 reads a sample's images or its videos, never both, and videos with the image processor: a batch
whose samples hold videos is processed here as the engine processed it, images by the image processor and videos by
the video processor, see :func:`media_inputs`) and :func:`wrap_response_extent` (EasyR1's reward managers take
``sum(response_mask)`` as the response's length; with holes that would cut the answer off and put the score on the
wrong token: they get the response's extent instead, so the whole exchange is decoded and the score lands on its
last sampled token).

Shapes: ``B`` conversations, ``P`` = prompt width (``rollout.prompt_length``), ``R`` = response width
(``rollout.response_length``); ``input_ids``, ``attention_mask`` (B, P + R); ``responses``, ``response_mask``,
``rollout_log_probs`` (B, R); ``position_ids`` (B, 4, P + R) (row 0: text positions, rows 1–3: M-RoPE).
"""

from __future__ import annotations

import hashlib
import math
import mmap
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import torch

from zoomzero_plugin.mrope import vision_positions

from .conversation import Conversation, Piece
from .dataset_videos import timed_videos

# Model types whose M-RoPE rule (transformers' and vLLM's get_rope_index) this module lays out: Qwen2-VL and
# Qwen2.5-VL (a video's temporal positions scaled by its seconds per temporal patch), Qwen3-VL (a video as one
# block per temporal patch, each after its timestamp text). Images follow the same rule in all of them.
MROPE_MODEL_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe")
MEDIA_UID = "media_uid"  # non_tensor_batch: one id per sample; the key of its processed media in the actor
SAMPLED_LOG_PROBS = "rollout_log_probs"  # batch: the sampler's log-prob of each sampled token (0 elsewhere)


@dataclass(frozen=True)
class Layout:
    """Token ids and widths: the processor's image placeholder and the batch's fixed widths."""

    image_token_id: int
    pad_token_id: int
    prompt_length: int
    response_length: int


def _expand(conversations: Sequence[Conversation], image_token_id: int) -> tuple[Any, ...]:
    """Conversations (prompt, then response pieces) expanded and laid end to end, in a handful of array passes.

    Returns ``(ids, sampled, logprob, lengths, starts, grids, times)``: (N,) expanded ids, sampled flags and
    log-probs (0 where not sampled); (B,) expanded tokens per conversation; (K,) index of each vision block's first
    token, (K, 3) its grid ``(t, h, w)`` and, by block index, the temporal offsets of blocks with ``t > 1``; blocks
    (images and videos) in order. ValueError when a conversation's placeholders and media differ.
    """
    pieces = [p for c in conversations for p in (c.prompt, *c.response)]
    per_conversation = np.array([1 + len(c.response) for c in conversations], dtype=np.int64)
    arrays: dict[int, np.ndarray] = {}  # by piece: the n samples of a prompt share its first prompt's piece
    video_blocks: dict[int, tuple[list, list]] = {}  # by piece with videos: its blocks and their temporal offsets
    for p in pieces:
        if id(p) not in arrays:
            ids = p.ids
            if p.layouts:  # videos expanded here already: the engine's own replacement tokens
                ids, *video_blocks[id(p)] = p.video_expanded()
            arrays[id(p)] = np.fromiter(ids, dtype=np.int64, count=len(ids))
    sizes = np.fromiter((arrays[id(p)].size for p in pieces), dtype=np.int64, count=len(pieces))
    ends = np.cumsum(sizes)  # end of each piece in raw
    total = int(ends[-1]) if pieces else 0
    raw = np.concatenate([arrays[id(p)] for p in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    logprob = np.zeros(total, dtype=np.float32)
    with_logprobs = [k for k, p in enumerate(pieces) if p.logprobs is not None]
    if with_logprobs:
        at = np.concatenate(
            [np.arange(s - n, s) for s, n in zip(ends[with_logprobs].tolist(), sizes[with_logprobs].tolist())]
        )
        logprob[at] = np.fromiter(
            chain.from_iterable(pieces[k].logprobs for k in with_logprobs), dtype=np.float32, count=at.size
        )
    sampled = np.repeat(np.fromiter((p.sampled for p in pieces), dtype=bool, count=len(pieces)), sizes)
    grids = np.array([g for p in pieces for g in p.grids], dtype=np.int64).reshape(-1, 2)
    where = np.flatnonzero(raw == image_token_id)
    raw_ends = ends[np.cumsum(per_conversation) - 1]  # end of each conversation in raw
    found = np.diff(np.searchsorted(where, raw_ends), prepend=0)
    given = np.array([sum(len(p.grids) for p in (c.prompt, *c.response)) for c in conversations], dtype=np.int64)
    for n_found, n_given in zip(found.tolist(), given.tolist()):
        if n_found != n_given:
            raise ValueError(f"{n_found} image placeholders in the ids but {n_given} images")
    counts = np.ones(total, dtype=np.int64)
    counts[where] = grids[:, 0] * grids[:, 1]
    before = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(counts)])  # expanded tokens before each raw one
    lengths = np.diff(before[raw_ends], prepend=0)
    starts, grids = before[where], np.column_stack([np.ones(len(grids), dtype=np.int64), grids])
    times: dict[int, np.ndarray] = {}
    if video_blocks:
        starts, grids, times = _with_videos(pieces, ends - sizes, video_blocks, before, starts, grids)
    return (
        np.repeat(raw, counts),
        np.repeat(sampled, counts),
        np.repeat(logprob, counts),
        lengths,
        starts,
        grids,
        times,
    )


def _with_videos(
    pieces: Sequence[Piece],
    offsets: np.ndarray,
    video_blocks: dict[int, tuple[list, list]],
    before: np.ndarray,
    starts: np.ndarray,
    grids: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Image blocks and the pieces' video blocks merged in sequence order (expanded indices), with the temporal
    offsets of the video blocks by their index among all blocks."""
    v_starts, v_grids, v_times = [], [], []
    for p, offset in zip(pieces, offsets.tolist()):
        if id(p) in video_blocks:
            blocks, times = video_blocks[id(p)]
            v_starts += [int(before[offset + at]) for at, *_ in blocks]
            v_grids += [grid for _, *grid in blocks]
            v_times += times
    all_starts = np.concatenate([starts, np.asarray(v_starts, dtype=np.int64)])
    all_grids = np.concatenate([grids, np.asarray(v_grids, dtype=np.int64).reshape(-1, 3)])
    order = np.argsort(all_starts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    times = {int(rank[len(starts) + k]): np.asarray(t) for k, t in enumerate(v_times) if len(t) > 1}
    return all_starts[order], all_grids[order], times


def media_key(batch_id: str, images: Sequence[Any], names: dict[int, str] | None = None) -> str:
    """A key naming exactly ``images`` (any media: images, then videos) within one batch: frame references by their
    group and position, video references by their group, anything else by identity (never shared). ``names``: a
    memo of each item's name by ``id`` (items shared by several samples, such as a prompt's overview, are named
    once), valid while those items are alive."""
    names = {} if names is None else names
    parts = []
    for im in images:
        name = names.get(id(im))
        if name is None:
            keyed = isinstance(im, Mapping) and "group" in im
            name = names[id(im)] = (
                f"{im['group']}#{im['pick']}"
                if keyed and "pick" in im
                else f"{im['group']}#video"
                if keyed
                else f"id:{id(im)}"
            )
        parts.append(name)
    return f"{batch_id}-{hashlib.sha1(chr(0).join(parts).encode()).hexdigest()}"


def _zeros(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """``torch.zeros(shape, dtype=dtype)`` whose pages the kernel zeroes when first touched (an anonymous map, in
    small pages): ``torch.zeros`` writes every byte up front, and the batch is mostly padding (a 2048 × 43,008
    step holds ~4.7 GB), so its untouched pages are never written nor held. The tensor is not resizable."""
    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    if nbytes < 1 << 20:
        return torch.zeros(shape, dtype=dtype)
    buffer = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # a huge page is zeroed whole at its first write: no saving
        buffer.madvise(mmap.MADV_NOHUGEPAGE)
    return torch.frombuffer(buffer, dtype=dtype).view(shape)  # the tensor holds the map


def assemble(
    conversations: Sequence[Conversation], layout: Layout, sampled_log_probs: bool = False, chunk: int = 64
) -> dict[str, Any]:
    """Tensors and per-sample fields of a batch of conversations (see the module docstring for the layout).

    Padding (left of a prompt, right of a response) gets id ``pad_token_id``, masks 0 and position 0: nothing
    reads it (EasyR1 drops it before a padding-free forward; masked keys otherwise). ``chunk`` conversations are
    expanded at a time, which bounds the temporary memory.

    Returns ``{"tensors": {...}, "non_tensors": {"multi_modal_data", "media_uid"}}`` for ``DataProto.from_dict``.
    Raises ValueError when a prompt or a response does not fit its width.
    """
    b, width_p, width_r = len(conversations), layout.prompt_length, layout.response_length
    width = width_p + width_r
    input_ids = torch.full((b, width), layout.pad_token_id, dtype=torch.long)
    attention = _zeros((b, width), torch.long)
    response_mask = _zeros((b, width_r), torch.long)
    positions = _zeros((b, 4, width), torch.long)
    log_probs = _zeros((b, width_r), torch.float32) if sampled_log_probs else None
    media, media_uid = np.empty(b, dtype=object), np.empty(b, dtype=object)
    batch_id = uuid.uuid4().hex  # media keys never match another batch's (EasyR1 caches by them)
    names: dict[int, str] = {}  # media_key's memo (the conversations hold every image until the end)
    for first in range(0, b, chunk):
        block = conversations[first : first + chunk]
        ids, sampled, logprob, lengths, starts, grids, times = _expand(block, layout.image_token_id)
        prompt_tokens = [c.prompt.tokens for c in block]
        for i, (p, n) in enumerate(zip(prompt_tokens, lengths.tolist()), start=first):
            if p > width_p:
                raise ValueError(
                    f"sample {i}: its first prompt has {p} tokens, more than the prompt width {width_p} "
                    "(data.max_prompt_length)"
                )
            if n - p > width_r:
                raise ValueError(
                    f"sample {i}: its response has {n - p} tokens, more than the response width "
                    f"{width_r} (data.max_response_length)"
                )
        offsets = (np.cumsum(lengths) - lengths).tolist()
        rope = torch.from_numpy(vision_positions(lengths, starts, grids, times))  # (3, N)
        ids, sampled, logprob = torch.from_numpy(ids), torch.from_numpy(sampled), torch.from_numpy(logprob)
        steps = torch.arange(int(lengths.max(initial=0)))
        for i, (p, n, o) in enumerate(zip(prompt_tokens, lengths.tolist(), offsets), first):
            lo, hi = width_p - p, width_p + n - p  # the conversation's columns
            input_ids[i, lo:hi] = ids[o : o + n]
            attention[i, lo:hi] = 1
            response_mask[i, : n - p] = sampled[o + p : o + n]
            if log_probs is not None:
                log_probs[i, : n - p] = logprob[o + p : o + n]
            positions[i, 0, lo:hi] = steps[:n]
            positions[i, 1:, lo:hi] = rope[:, o : o + n]
            media[i] = {k: list(v) for k, v in conversations[i].media().items()}
            media_uid[i] = media_key(batch_id, [m for v in media[i].values() for m in v], names)
    tensors = {
        "prompts": input_ids[:, :width_p],
        "responses": input_ids[:, width_p:],
        "input_ids": input_ids,
        "attention_mask": attention,
        "response_mask": response_mask,
        "position_ids": positions,
    }
    if log_probs is not None:
        tensors[SAMPLED_LOG_PROBS] = log_probs
    return {"tensors": tensors, "non_tensors": {"multi_modal_data": media, MEDIA_UID: media_uid}}


# -- seams ---------------------------------------------------------------------------------------------------


def media_inputs(processor: Any, media: Mapping[str, Any], meta_info: Mapping[str, Any]) -> dict[str, Any]:
    """One sample's model inputs from its media as the rollout engine processed them: images through EasyR1's
    ``process_image`` and the image processor, videos (references the plugins' ``process_video`` seam decodes to
    ``(frames, metadata)``) through the video processor, with their metadata and without a second frame sampling."""
    from verl.workers import fsdp_workers  # its module globals: the seam-wrapped process_image / process_video

    low, high = meta_info["min_pixels"], meta_info["max_pixels"]
    images = [fsdp_workers.process_image(image, low, high) for image in media.get("images") or []]
    out = dict(processor.image_processor(images=images, return_tensors="pt")) if images else {}
    videos = [
        fsdp_workers.process_video(v, low, high, meta_info["video_fps"], return_metadata=True)
        for v in media.get("videos") or []
    ]
    if videos:
        frames, metadata = zip(*videos)
        processed = processor.video_processor(
            videos=list(frames), video_metadata=list(metadata), do_sample_frames=False, return_tensors="pt"
        )
        out.update({k: v for k, v in processed.items() if isinstance(v, torch.Tensor)})
    return out


def _process_with_videos(worker: Any, data: Any) -> None:
    """EasyR1's ``_process_multi_modal_inputs`` (its per-``uid`` cache kept) for samples whose media hold videos."""
    uids = data.non_tensor_batch["uid"]
    cache = worker._cache
    if "uid" in cache and not np.all(uids == cache["uid"]):
        cache.clear()
    if "multi_modal_inputs" not in cache:
        memo: dict[Any, dict[str, Any]] = {}
        for uid, media in zip(uids, data.non_tensor_batch["multi_modal_data"]):
            if uid not in memo:
                memo[uid] = media_inputs(worker.processor, media, data.meta_info)
        cache["uid"] = uids
        cache["multi_modal_inputs"] = np.array([memo[u] for u in uids], dtype=object)
    data.non_tensor_batch["multi_modal_inputs"] = cache["multi_modal_inputs"]


def wrap_process_multi_modal_inputs(original: Callable) -> Callable:
    def _process_multi_modal_inputs(self, data):
        media_uid = data.non_tensor_batch.get(MEDIA_UID)
        if media_uid is None:  # EasyR1's single-turn batch: a Qwen3-VL row's video as the engine processed it
            return (_process_with_videos if timed_videos(self.processor, data) else original)(self, data)
        had_uid = "uid" in data.non_tensor_batch
        uid = data.non_tensor_batch.get("uid")
        data.non_tensor_batch["uid"] = media_uid  # EasyR1 keys processed media by this: one entry per sample
        try:
            if any((m or {}).get("videos") for m in data.non_tensor_batch.get("multi_modal_data", [])):
                return _process_with_videos(self, data)
            return original(self, data)
        finally:
            if had_uid:
                data.non_tensor_batch["uid"] = uid
            else:
                data.non_tensor_batch.pop("uid")

    return _process_multi_modal_inputs


def wrap_process_multi_modal_data(original: Callable) -> Callable:
    """EasyR1's rollout reads a prompt's images or its videos, never both (it returns the images alone): a prompt
    that holds both (a conversation whose clips are videos, after image overview frames) gets both."""

    def _process_multi_modal_data(multi_modal_data, *args, **kwargs):
        images, videos = multi_modal_data.get("images"), multi_modal_data.get("videos")
        if not (images and videos):
            return original(multi_modal_data, *args, **kwargs)
        return {**original({"images": images}, *args, **kwargs), **original({"videos": videos}, *args, **kwargs)}

    return _process_multi_modal_data


def wrap_response_extent(original: Callable) -> Callable:
    def compute_reward(self, data):
        mask = data.batch["response_mask"]
        if "attention_mask" not in data.batch.keys():
            return original(self, data)
        extent = data.batch["attention_mask"][:, -mask.size(-1) :].to(mask.dtype)
        if torch.equal(extent, mask):
            return original(self, data)
        data.batch["response_mask"] = extent  # a response with holes is measured by its extent
        try:
            return original(self, data)
        finally:
            data.batch["response_mask"] = mask

    return compute_reward
