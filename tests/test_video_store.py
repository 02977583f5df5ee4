"""The process's video store: each video opened once, each native frame decoded once, and the pixels every reader
gets equal to what a fresh decord reader (qwen-vl-utils' own, or the agent's) decodes."""

import threading

import numpy as np
import pytest
import torch
from PIL import Image

from zoomzero_plugin import video_store
from zoomzero_plugin.agent.frames import FrameReader, fit_size
from zoomzero_plugin.synthetic.videos import Evidence, write_video
from zoomzero_plugin.video import _qwen_vl_utils, fetch_element


@pytest.fixture
def store(monkeypatch):
    """A fresh store as the process's shared one."""
    fresh = video_store.VideoStore()
    monkeypatch.setattr(video_store, "_SHARED", [fresh])
    return fresh


def fresh_frames(path, indices):
    import decord

    return decord.VideoReader(str(path)).get_batch(list(indices)).asnumpy()


def qwen_vl_utils_own(monkeypatch, element):
    """qwen-vl-utils' fetch_video with its own decord reader (a fresh VideoReader per call)."""
    vp = _qwen_vl_utils().vision_process
    with monkeypatch.context() as m:
        m.setitem(vp.VIDEO_READER_BACKENDS, "decord", vp.VIDEO_READER_BACKENDS["decord"].original)
        (frames, metadata), fps = vp.fetch_video(
            dict(element), image_patch_size=PATCH, return_video_sample_fps=True, return_video_metadata=True
        )
    return frames, metadata, fps


# 12 s at 4 fps: the coarse pass at 1 fps reads linspace(0, 47, 12) -> 0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47;
# the clip [2, 5] s at 8 frames reads linspace(8, 20, 8) -> 8, 10, 11, 13, 15, 17, 18, 20: frames 13 and 17 are shared.
PATCH = 14  # Qwen2.5-VL's patch side
COARSE = {"min_pixels": 3136, "max_pixels": 12544, "fps": 1.0}
CLIP = {"video_start": 2.0, "video_end": 5.0, "nframes": 8, "min_pixels": 3136, "max_pixels": 50176}


def test_qwen_vl_utils_through_the_store_gives_its_own_pixels_and_reuses_frames(store, evidence_video, monkeypatch):
    for element in (COARSE, CLIP):
        element = {"video": str(evidence_video), **element}
        got = fetch_element(element, image_patch_size=PATCH)
        frames, metadata, fps = qwen_vl_utils_own(monkeypatch, element)
        assert torch.equal(got.frames, frames) and got.metadata == metadata and got.sample_fps == fps
    assert got.metadata["frames_indices"] == [8, 10, 11, 13, 15, 17, 18, 20]
    stats = store.stats()
    assert (stats.opens, stats.decodes) == (1, 2), "one open for both passes, one batched read each"
    assert (stats.frames_decoded, stats.hits) == (12 + 6, 2), "the clip's frames 13 and 17 came from the coarse read"
    # the same clip again (another sample of a group)
    again = fetch_element({"video": str(evidence_video), **CLIP}, image_patch_size=PATCH)
    assert torch.equal(again.frames, got.frames) and store.stats().decodes == 2 and store.stats().hits == 10


def test_the_agents_frames_equal_a_fresh_readers_in_any_order(store, evidence_video):
    reader = FrameReader(str(evidence_video))
    first, later = [0, 8, 16, 24, 32, 40], [9, 8, 47, 8, 30]  # repeats, out of order, partly decoded already
    for indices in (first, later):
        images = reader.read(indices, max_pixels=12544, min_pixels=3136)
        for image, array in zip(images, fresh_frames(evidence_video, indices)):
            want = Image.fromarray(array).resize(fit_size(224, 168, 12544, 3136), Image.LANCZOS)
            assert image.size == want.size == (129, 96) and image.tobytes() == want.tobytes()
    assert FrameReader(str(evidence_video)).info == reader.info
    stats = store.stats()
    # the second read: 8 twice from memory; 9, 47 and 30 decoded
    assert (stats.opens, stats.decodes, stats.frames_decoded, stats.hits) == (1, 2, 6 + 3, 2)


def test_threads_reading_one_video_each_get_their_own_reader(evidence_video):
    store = video_store.VideoStore(max_bytes=0)  # nothing kept: every read decodes
    sets = [list(range(k, 48, 4)) for k in range(4)]
    want = [fresh_frames(evidence_video, s) for s in sets]
    got, errors = [None] * 4, []
    barrier = threading.Barrier(4)

    def read(k):
        try:
            barrier.wait()
            for _ in range(3):
                got[k] = store.frames(str(evidence_video), sets[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=read, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(np.array_equal(g, w) for g, w in zip(got, want))
    stats = store.stats()
    assert 1 <= stats.opens <= 4 and stats.decodes == 12 and stats.hits == 0 and store.held_bytes == 0


class Gated:
    """A real decord reader whose reads wait at a barrier (``gate[0]``): the n threads of a round each hold a reader at
    the same moment, so the store must have n of them."""

    def __init__(self, reader, gate):
        self.reader, self.gate = reader, gate

    def __len__(self):
        return len(self.reader)

    def get_avg_fps(self):
        return self.reader.get_avg_fps()

    def get_batch(self, indices):
        self.gate[0].wait(timeout=60)
        return self.reader.get_batch(indices)


def test_up_to_four_idle_readers_are_kept_per_video(evidence_video, monkeypatch):
    store = video_store.VideoStore(max_bytes=0)  # nothing kept: every read decodes
    gate, opened = [None], store._open
    monkeypatch.setattr(store, "_open", lambda path: Gated(opened(path), gate))
    store.info(str(evidence_video))  # one reader, idle
    errors = []

    def read(k):
        try:
            store.frames(str(evidence_video), [k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def round_of(n: int) -> int:
        gate[0] = threading.Barrier(n)
        threads = [threading.Thread(target=read, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        return store.stats().opens

    assert round_of(4) == 4  # four readers busy at once: three more opened
    assert round_of(4) == 4  # all four were kept idle: none opened
    assert round_of(5) == 5  # one more than are kept: one opened
    assert round_of(4) == 5  # four kept, the fifth let go: none opened


def test_the_store_holds_at_most_its_bytes_least_recently_used_out(evidence_video):
    frame = 224 * 168 * 3
    store = video_store.VideoStore(max_bytes=3 * frame)
    store.frames(str(evidence_video), [0, 1, 2, 3, 4])
    assert store.held_bytes == 3 * frame
    store.frames(str(evidence_video), [4])  # kept: a hit
    store.frames(str(evidence_video), [0])  # evicted: decoded again
    stats = store.stats()
    assert (stats.decodes, stats.hits, stats.frames_decoded) == (2, 1, 6)


FRAME = 224 * 168 * 3  # one native frame of the evidence video, RGB uint8


@pytest.mark.parametrize(
    ("capacity", "held", "counts"),
    [(3 * FRAME, 3, (1, 3, 3)), (3 * FRAME - 1, 2, (2, 4, 2))],  # (decodes, frames decoded, hits)
    ids=["exactly", "one-byte-short"],
)
def test_frames_filling_the_store_exactly_are_all_kept(evidence_video, capacity, held, counts):
    store = video_store.VideoStore(max_bytes=capacity)
    store.frames(str(evidence_video), [0, 1, 2])
    assert store.held_bytes == held * FRAME
    store.frames(str(evidence_video), [0, 1, 2])  # exactly: 3 from memory; a byte short: 0 went, decoded again
    stats = store.stats()
    assert (stats.decodes, stats.frames_decoded, stats.hits) == counts


def test_one_frame_over_the_bound_evicts_the_least_recently_used(evidence_video):
    store = video_store.VideoStore(max_bytes=3 * FRAME)
    path = str(evidence_video)
    store.frames(path, [0, 1, 2])  # full: 1 decode, 3 frames
    store.frames(path, [0])  # a hit; least recently used now: 1, then 2, then 0
    store.frames(path, [3])  # one over: 3 decoded, 1 out
    assert store.held_bytes == 3 * FRAME
    store.frames(path, [0, 2, 3])  # all three kept: 3 hits
    store.frames(path, [1])  # evicted before: decoded again (and 0, now least recent, goes)
    stats = store.stats()
    assert (stats.opens, stats.decodes, stats.frames_decoded, stats.hits) == (1, 3, 5, 1 + 3)
    store.frames(path, [2, 3, 1])
    store.frames(path, [0])
    assert (store.stats().hits, store.stats().frames_decoded) == (4 + 3, 6), "0 was the one evicted"


def test_a_kept_frame_holds_its_own_pixels_not_its_whole_batch(evidence_video):
    """The bound is on memory: of 16 frames decoded in one read with room for one, one frame's pixels stay in memory
    (224 x 168 x 3 = 112,896 bytes), not the 16 of the batch it was decoded in (1,806,336 bytes)."""
    import gc
    import tracemalloc

    store = video_store.VideoStore(max_bytes=FRAME)
    path = str(evidence_video)
    store.info(path)  # decord imported and the video opened before counting
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store.frames(path, list(range(16)))  # what it returns is dropped at once
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert store.held_bytes == FRAME
    assert FRAME <= kept < 2 * FRAME, f"{kept / FRAME:.1f} frames of memory kept for one frame counted"


def _read_in_child(path, out):
    store = video_store.shared()
    frames = store.frames(path, [1, 7, 44, 30])
    out.put((frames, store.stats().opens, video_store.decode_pool().submit(sum, [1, 2]).result()))


def test_a_forked_child_reads_with_its_own_readers_and_threads(evidence_video, monkeypatch):
    """A process forked after reading (a DataLoader worker) gets its own store and decode threads: the parent's
    decord readers and threads do not work there (a read, or a decode sent to the threads, would wait for ever), and
    freeing such a reader there crashes the child, so they are kept, unused. A subprocess started with a preexec_fn
    (as Ray starts its GCS server) runs the fork hooks too, before its exec."""
    import multiprocessing
    import subprocess
    import sys

    monkeypatch.setattr(video_store, "_SHARED", [])  # only the module holds the store, as in a real process
    path = str(evidence_video)
    video_store.shared().frames(path, [0, 5, 40])  # the parent's reader has decoded, its threads have run
    assert video_store.decode_pool().submit(sum, [0]).result() == 0
    assert subprocess.run([sys.executable, "-c", "pass"], preexec_fn=lambda: None, timeout=60).returncode == 0
    fork = multiprocessing.get_context("fork")
    out = fork.Queue()
    child = fork.Process(target=_read_in_child, args=(path, out))
    child.start()
    try:
        frames, opens, three = out.get(timeout=60)
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    assert np.array_equal(frames, fresh_frames(evidence_video, [1, 7, 44, 30])) and (opens, three) == (1, 3)
    assert child.exitcode == 0 and video_store.shared().stats().opens == 1, "the parent's store is its own still"


def test_open_videos_beyond_the_bound_close_least_recently_used_first(tmp_path):
    paths = []
    for name in "abc":
        paths.append(str(tmp_path / f"{name}.mp4"))
        write_video(paths[-1], duration=1.0, fps=4, width=32, height=32, evidence=[])
    store = video_store.VideoStore(max_videos=2)
    for path in (paths[0], paths[1], paths[0]):  # exactly two open: a's second look opens nothing
        store.info(path)
    assert store.stats().opens == 2
    store.info(paths[2])  # one over: b (least recently used) closes
    store.info(paths[0])
    assert store.stats().opens == 3
    store.info(paths[1])
    assert store.stats().opens == 4


def test_a_video_written_again_under_its_name_is_read_again(tmp_path):
    path = tmp_path / "v.mp4"
    store = video_store.VideoStore()
    write_video(path, duration=2.0, fps=4, width=64, height=48, evidence=[Evidence(0.0, 2.0, "red")])
    red = store.frames(str(path), [2])
    write_video(path, duration=3.0, fps=4, width=64, height=48, evidence=[Evidence(0.0, 3.0, "blue")])
    blue = store.frames(str(path), [2])
    assert store.info(str(path)) == (12, 4.0) and not np.array_equal(red, blue)
    assert np.array_equal(blue, fresh_frames(path, [2])) and store.stats().opens == 2


def test_a_video_rewritten_with_the_same_size_is_read_again(tmp_path):
    """Known by path, size and modification time: the same path and size with a later mtime is another video."""
    import os

    path, red, blue = tmp_path / "v.mp4", tmp_path / "red.mp4", tmp_path / "blue.mp4"
    write_video(red, duration=2.0, fps=4, width=64, height=48, evidence=[Evidence(0.0, 2.0, "red")])
    write_video(blue, duration=2.0, fps=4, width=64, height=48, evidence=[Evidence(0.0, 2.0, "blue")])
    size = max(red.stat().st_size, blue.stat().st_size) + 16
    for video in (red, blue):  # padded to one size with an MP4 "free" box, which readers skip
        pad = size - video.stat().st_size
        with video.open("ab") as f:
            f.write(pad.to_bytes(4, "big") + b"free" + bytes(pad - 8))
    store = video_store.VideoStore()
    path.write_bytes(red.read_bytes())
    os.utime(path, ns=(10**18, 10**18))
    first = store.frames(str(path), [2])
    path.write_bytes(blue.read_bytes())
    os.utime(path, ns=(10**18 + 10**9, 10**18 + 10**9))  # one second later
    assert path.stat().st_size == size
    second = store.frames(str(path), [2])
    assert np.array_equal(first, fresh_frames(red, [2])) and np.array_equal(second, fresh_frames(blue, [2]))
    assert not np.array_equal(first, second) and store.stats().opens == 2
