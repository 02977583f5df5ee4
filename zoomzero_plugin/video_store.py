"""Each video opened once and each native frame decoded once: the process's open videos and decoded frames.

Every reader of frames in a process goes through one :class:`VideoStore` (:func:`shared`): qwen-vl-utils' decord
reader (:mod:`zoomzero_plugin.video` routes it here: Zoom-Zero's coarse and zoom passes, EasyR1's ``process_video``
in a rollout worker) and VideoZoomer's overview and clips (:class:`~zoomzero_plugin.agent.frames.FrameReader`), in
evaluation and in EasyR1's rollout workers alike. It keeps

- **open readers**, reused across calls: opening a video indexes the file (~20 ms at 60 s, ~220 ms at 1,200 s).
  decord's ``VideoReader`` is not safe for two threads at once (its threaded decoder aborts), so each reader serves
  one thread at a time: a thread that finds every reader of a video busy opens another (at most
  ``readers_per_video`` are kept), and the clips of one video decode in parallel threads (decord releases the GIL);
- **decoded native frames** (RGB ``uint8``, the video's own size), least recently used first out beyond
  ``max_bytes``: a frame another pass already decoded (a coarse-pass frame at a time the zoom pass also reads, an
  overview frame a clip repeats, the clip several samples of a group ask for) is not decoded again. A frame comes back
  as decord decodes it for its index, so pixels equal a fresh reader's.

A video is known by its path, size and modification time: a file written again under the same name is opened again.
Counted (:meth:`VideoStore.stats`): opens, decodes (batched reads), frames decoded, frames served from memory (hits)
and seconds spent decoding. :func:`decode_pool` is the process's thread pool for such decoding. A forked child (a
DataLoader worker) starts with a store and threads of its own: the parent's readers and threads do not work there.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .errors import VideoError

DEFAULT_MAX_BYTES = 1 << 30  # decoded frames kept per process (1 GiB: ~5,000 frames of 320x180, ~170 of 1080p)


@dataclass
class StoreStats:
    """What a store did: videos opened, batched decodes, frames decoded, frames served from memory, decode seconds."""

    opens: int = 0
    decodes: int = 0
    frames_decoded: int = 0
    hits: int = 0
    decode_s: float = 0.0

    def minus(self, before: StoreStats) -> StoreStats:
        """What happened since ``before`` (an earlier copy)."""
        return StoreStats(*(a - b for a, b in zip(asdict(self).values(), asdict(before).values())))


class _Video:
    """One video: frame count, average fps, and its idle readers."""

    def __init__(self, frames: int, fps: float, reader: Any):
        self.frames, self.fps = frames, fps
        self.idle = [reader]


def _identity(path: str) -> tuple[str, int, int]:
    try:
        st = os.stat(path.removeprefix("file://"))
    except OSError:  # a URL, or gone: decord says what is wrong when it opens it
        return path, 0, 0
    return path, st.st_size, st.st_mtime_ns


class VideoStore:
    """Open decord readers and decoded native frames of a process (see the module docstring); thread-safe."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_videos: int = 32, readers_per_video: int = 4):
        self.max_bytes, self.max_videos, self.readers_per_video = int(max_bytes), int(max_videos), readers_per_video
        self._videos: OrderedDict[tuple, _Video] = OrderedDict()
        self._frames: OrderedDict[tuple, np.ndarray] = OrderedDict()  # (identity, index) -> (H, W, 3) uint8
        self._bytes = 0
        self._lock = threading.Lock()
        self._stats = StoreStats()

    # -- readers ---------------------------------------------------------------------------------------------

    def _open(self, path: str) -> Any:
        try:
            import decord
        except ImportError as e:  # decord is a dependency; a broken install is the user's to fix
            raise VideoError(f"{path}: decord is needed to read frames ({e}); pip install decord") from None
        try:
            reader = decord.VideoReader(path)
        except (decord.DECORDError, RuntimeError, ValueError) as e:
            raise VideoError(
                f"{path}: cannot read the video ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
            ) from None
        with self._lock:
            self._stats.opens += 1
        return reader

    def _video(self, key: tuple) -> _Video:
        with self._lock:
            video = self._videos.get(key)
            if video is not None:
                self._videos.move_to_end(key)
                return video
        reader = self._open(key[0])
        video = _Video(len(reader), float(reader.get_avg_fps()), reader)
        with self._lock:
            if key in self._videos:  # another thread opened it meanwhile: keep its entry, add this reader to it
                self._release(key, self._videos[key], reader)
                return self._videos[key]
            self._videos[key] = video
            while len(self._videos) > self.max_videos:
                self._videos.popitem(last=False)
        return video

    def _release(self, key: tuple, video: _Video, reader: Any) -> None:
        if len(video.idle) < self.readers_per_video:
            video.idle.append(reader)

    def info(self, path: str) -> tuple[int, float]:
        """(frames, average fps) of ``path`` (opens it once); VideoError when it cannot be read."""
        video = self._video(_identity(str(path)))
        return video.frames, video.fps

    # -- frames ----------------------------------------------------------------------------------------------

    def frames(self, path: str, indices: Sequence[int]) -> np.ndarray:
        """The native frames at ``indices`` (in that order, repeats allowed), ``(k, H, W, 3)`` uint8: frames in memory
        as they are, the others decoded with one batched read on a reader no other thread is using."""
        key = _identity(str(path))
        indices = [int(i) for i in indices]
        found: dict[int, np.ndarray] = {}
        with self._lock:
            for i in set(indices):
                frame = self._frames.get((key, i))
                if frame is not None:
                    self._frames.move_to_end((key, i))
                    found[i] = frame
            self._stats.hits += sum(1 for i in indices if i in found)
        missing = sorted(set(indices) - set(found))
        if missing:
            found.update(zip(missing, self._decode(key, missing)))
        return np.stack([found[i] for i in indices]) if indices else np.zeros((0, 0, 0, 3), np.uint8)

    def _decode(self, key: tuple, indices: list[int]) -> np.ndarray:
        video = self._video(key)
        with self._lock:
            reader = video.idle.pop() if video.idle else None
        if reader is None:  # every reader of this video is busy in another thread: one more
            reader = self._open(key[0])
        start = time.perf_counter()
        try:
            batch = reader.get_batch(indices).asnumpy()
        finally:
            with self._lock:
                self._release(key, video, reader)
        with self._lock:
            self._stats.decodes += 1
            self._stats.frames_decoded += len(indices)
            self._stats.decode_s += time.perf_counter() - start
            for i, frame in zip(indices, batch):
                if (key, i) not in self._frames:
                    self._frames[(key, i)] = frame
                    self._bytes += frame.nbytes
            while self._bytes > self.max_bytes and self._frames:
                _, old = self._frames.popitem(last=False)
                self._bytes -= old.nbytes
            for i in indices:  # each frame kept its own copy: a view of the batch would keep the whole batch alive
                frame = self._frames.get((key, i))
                if frame is not None and frame.base is batch:
                    self._frames[(key, i)] = frame.copy()
        return batch

    # -- bookkeeping -----------------------------------------------------------------------------------------

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def stats(self) -> StoreStats:
        """A copy of the counters (subtract an earlier copy with :meth:`StoreStats.minus`)."""
        with self._lock:
            return StoreStats(**asdict(self._stats))

    def clear(self) -> None:
        """Forget every reader and frame (the counters stay)."""
        with self._lock:
            self._videos.clear()
            self._frames.clear()
            self._bytes = 0


_SHARED: list[VideoStore] = []
_POOL: list[ThreadPoolExecutor] = []
_SHARED_LOCK = threading.Lock()
_INHERITED: list[Any] = []  # in a forked child: the parent's store and threads, kept unused (see _forget_in_child)


def shared() -> VideoStore:
    """The process's store (made at first use, :data:`DEFAULT_MAX_BYTES` of frames)."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(VideoStore())
        return _SHARED[0]


def decode_pool() -> ThreadPoolExecutor:
    """The process's threads for decoding (decord and PIL's resize release the GIL): one per core, 2..4."""
    with _SHARED_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max(2, min(4, os.cpu_count() or 2)), thread_name_prefix="zoomzero-decode"))
        return _POOL[0]


def _forget_in_child() -> None:
    """After a fork (a DataLoader worker): the parent's decord readers and decode threads do not work in the child (a
    read, or a decode sent to the threads, waits for ever), so the child makes its own store and threads. The parent's
    are kept, not freed: freeing a decord reader in the child aborts it (FFmpeg's frame-thread lock), even a child
    that only runs a ``preexec_fn`` before its exec (Ray starting its GCS server)."""
    global _SHARED_LOCK
    _SHARED_LOCK = threading.Lock()
    _INHERITED.extend(_SHARED + _POOL)
    _SHARED.clear()
    _POOL.clear()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_in_child)
