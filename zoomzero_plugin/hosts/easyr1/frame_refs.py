"""Frame references: a ``multi_modal_data`` image that names a frame of a video instead of holding pixels.

A multi-turn video rollout shows a trajectory up to 128 frames as images. Decoded frames would cross Ray and sit in
every batch (~38 MB a trajectory); a reference is a few numbers, and EasyR1's ``process_image`` is wrapped to decode
it wherever EasyR1 reads images (the rollout's vLLM inputs, the actor's ``_process_multi_modal_inputs``)::

    {"video": "/data/v.mp4", "frames": [0, 60, 120, …], "pick": 2, "max_pixels": 100352, "min_pixels": 25088,
     "group": "/data/v.mp4|0,60,120,…|100352|25088"}

``frames`` are the native frame indices decoded together (an overview, or one clip), ``pick`` the position of this
image among them, ``group`` the cache key of the group (one string shared by its references: a lookup hashes it
once; EasyR1 looks every image up again in every round). A group is decoded with one batched read and kept in a
per-process LRU cache, so every image of a group, in every round and in the actor afterwards, comes from that one
read: the rollout and the actor see the same pixels.

The plugin whose rollout makes the references hands the seam its :class:`FrameCache` (:func:`install`), built over
its own frame reader (VideoZoomer's resizes frames by the authors' rule); EasyR1's ``data.min_pixels``/
``data.max_pixels`` do not apply to them (the model's image processor still rounds each side to its patch grid, in
the sampler and in the actor alike).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from zoomzero_plugin.video_store import decode_pool

FRAME_KEYS = ("video", "frames", "pick")


class FrameSource(Protocol):
    """An open video whose native frames can be read: ``read(indices, max_pixels, min_pixels)`` returns PIL images
    (one batched decode, resized within the pixel limits); ``info`` describes the video."""

    info: Any

    def read(self, indices: Sequence[int], max_pixels: int, min_pixels: int) -> list[Any]: ...


def group_key(video: str, frames: Sequence[int], max_pixels: int, min_pixels: int) -> str:
    return f"{video}|{','.join(str(int(f)) for f in frames)}|{int(max_pixels)}|{int(min_pixels)}"


def frame_refs(video: str, frames: Sequence[int], max_pixels: int, min_pixels: int) -> list[dict[str, Any]]:
    """References to every image of the group of native frames ``frames`` of ``video`` (one shared key)."""
    frames, key = [int(f) for f in frames], group_key(video, frames, max_pixels, min_pixels)
    video, max_pixels, min_pixels = str(video), int(max_pixels), int(min_pixels)
    return [
        {"video": video, "frames": frames, "pick": k, "max_pixels": max_pixels, "min_pixels": min_pixels, "group": key}
        for k in range(len(frames))
    ]


def frame_ref(video: str, frames: Sequence[int], pick: int, max_pixels: int, min_pixels: int) -> dict[str, Any]:
    """The reference to image ``pick`` of the group of native frames ``frames`` of ``video``."""
    return frame_refs(video, frames, max_pixels, min_pixels)[int(pick)]


def is_frame_ref(image: Any) -> bool:
    return isinstance(image, Mapping) and all(k in image for k in FRAME_KEYS)


class FrameCache:
    """Decoded frame groups, least recently used first out once ``max_bytes`` of pixels are held; ``open_video(path)``
    opens a :class:`FrameSource` (up to ``max_readers`` kept open)."""

    def __init__(self, open_video: Callable[[str], FrameSource], max_bytes: int = 2 << 30, max_readers: int = 16):
        self.open_video = open_video
        self.max_bytes, self.max_readers = int(max_bytes), int(max_readers)
        self._groups: OrderedDict[tuple, list[Any]] = OrderedDict()
        self._readers: OrderedDict[str, FrameSource] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.reads = 0  # batched decodes done (a group decoded again after eviction counts again)
        self.hits = 0  # groups served from memory

    def reader(self, video: str) -> FrameSource:
        with self._lock:
            reader = self._readers.pop(video, None)
            if reader is None:
                reader = self.open_video(video)
            self._readers[video] = reader
            while len(self._readers) > self.max_readers:
                self._readers.popitem(last=False)
            return reader

    def group(
        self, video: str, frames: Sequence[int], max_pixels: int, min_pixels: int, key: str | None = None
    ) -> list[Any]:
        """The PIL images of ``frames`` of ``video`` (decoded once, then cached under ``key``)."""
        key = key or group_key(video, frames, max_pixels, min_pixels)
        with self._lock:
            images = self._groups.get(key)
            if images is not None:
                self._groups.move_to_end(key)
                self.hits += 1
                return images
        images = self.reader(str(video)).read(
            [int(f) for f in frames], int(max_pixels), min(int(min_pixels), int(max_pixels))
        )
        with self._lock:
            self.reads += 1
            if key in self._groups:  # another thread decoded the same group meanwhile: keep one, count it once
                self._groups.move_to_end(key)
                return self._groups[key]
            self._groups[key] = images
            self._bytes += sum(im.width * im.height * 3 for im in images)
            while self._bytes > self.max_bytes and len(self._groups) > 1:
                _, old = self._groups.popitem(last=False)
                self._bytes -= sum(im.width * im.height * 3 for im in old)
        return images

    def image(self, ref: Mapping[str, Any]) -> Any:
        """The PIL image a frame reference names (its pixel limits are the reference's own: :func:`frame_refs`
        writes them; the plugin that makes references owns their defaults)."""
        missing = [k for k in ("max_pixels", "min_pixels") if k not in ref]
        if missing:
            raise ValueError(
                f"frame reference {dict(ref)!r:.200} has no {' or '.join(missing)}: make references "
                "with frame_refs.frame_refs()"
            )
        images = self.group(ref["video"], ref["frames"], ref["max_pixels"], ref["min_pixels"], ref.get("group"))
        return images[ref["pick"]]

    def prefetch(self, refs: Sequence[Mapping[str, Any]]) -> Future:
        """Decode the groups of ``refs`` in the decode threads (:func:`~zoomzero_plugin.video_store.decode_pool`);
        the Future is done when every group is in the cache."""
        groups = {
            ref.get("group") or group_key(ref["video"], ref["frames"], ref["max_pixels"], ref["min_pixels"]): ref
            for ref in refs
        }

        def decode() -> None:
            for key, ref in groups.items():
                self.group(ref["video"], ref["frames"], ref["max_pixels"], ref["min_pixels"], key)

        return decode_pool().submit(decode)

    def clear(self) -> None:
        with self._lock:
            self._groups.clear()
            self._readers.clear()
            self._bytes = 0


_installed: list[FrameCache] = []  # the cache the seam decodes references with, in this process


def install(cache: FrameCache) -> FrameCache:
    """Hand the ``process_image`` seam the cache that decodes frame references in this process (the plugin whose
    rollout makes references does, before its first reference); returns ``cache``."""
    _installed[:] = [cache]
    return cache


def installed() -> FrameCache | None:
    """The cache :func:`install` handed over in this process, or None."""
    return _installed[0] if _installed else None


def wrap_process_image(original: Callable) -> Callable:
    def process_image(image, *args, **kwargs):
        if not is_frame_ref(image):
            return original(image, *args, **kwargs)
        cache = installed()
        if cache is None:
            raise RuntimeError(
                f"a frame reference to {image['video']!r} reached EasyR1's process_image, but no plugin "
                "installed a frame cache in this process (frame_refs.install)"
            )
        return original(cache.image(image), None, None)  # RGB as EasyR1 gives it; the frame keeps its own size

    return process_image
