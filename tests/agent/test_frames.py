"""Reading the frames a trajectory names from a synthetic mp4 (evidence at known seconds) and the authors'
resize rule."""

import numpy as np
import pytest

from zoomzero_plugin.agent import Trajectory
from zoomzero_plugin.agent.frames import FrameReader, fit_size
from zoomzero_plugin.errors import VideoError
from zoomzero_plugin.synthetic.videos import dominant_color, write_video


def test_overview_and_clip_frames_show_what_lies_at_their_times(evidence_video):
    reader = FrameReader(str(evidence_video))  # 12 s at 4 fps; red square 3-5 s, blue 8-9.5 s
    assert (reader.info.frames, reader.info.fps) == (48, 4.0)
    t = Trajectory(reader.info)
    assert [f.time for f in t.overview] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # every 8th frame
    overview = reader.read([f.frame for f in t.overview])
    assert [dominant_color(np.asarray(im)) for im in overview] == [None, None, "red", None, "blue", None]
    step = t.step('<think>x</think><video_zoom>{"segment": [3, 5], "fps": 2}</video_zoom>')
    frames = step.observation.frames  # 4 frames: linspace(12, 20, 4) -> 12, 14, 17, 20
    assert [f.time for f in frames] == [3.0, 3.5, 4.25, 5.0]
    images = reader.read([f.frame for f in frames])
    assert [dominant_color(np.asarray(im)) for im in images] == ["red", "red", "red", None]  # shown until 5.0 s
    assert all(im.size == (224, 168) for im in images)  # 37,632 px: never enlarged


def test_large_frames_are_shrunk_as_the_authors_do(tmp_path):
    video = write_video(tmp_path / "wide.mp4", duration=1.0, fps=4, width=640, height=360)
    (image,) = FrameReader(str(video)).read([2])
    assert image.size == (422, 237)  # sqrt(100352 / 230400) = 0.65997: 640 -> 422, 360 -> 237


@pytest.mark.parametrize(
    "size, bounds, expected",
    [
        ((640, 360), (100352, 25088), (422, 237)),
        ((224, 168), (100352, 25088), (224, 168)),
        ((1000, 1000), (100352, 100000), (316, 316)),  # 316² = 99,856 < min: scaled by sqrt(100000/99856), still 316
        ((2000, 100), (10000, 9000), (447, 22)),  # scale sqrt(10000 / 200000) = 0.2236; 9,834 px >= min: kept
        ((500, 500), (100000, 200000 // 2), (316, 316)),  # 250,000 px: shrunk, 99,856 < 100,000, re-scaled: 316 again
    ],
)
def test_fit_size(size, bounds, expected):
    assert fit_size(*size, *bounds) == expected


def test_unreadable_videos_are_a_clear_error(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    with pytest.raises(VideoError, match="bad.mp4"):
        FrameReader(str(bad))
    with pytest.raises(VideoError, match="missing.mp4: no such video file"):
        FrameReader(str(tmp_path / "missing.mp4"))
    (tmp_path / "empty.mp4").write_bytes(b"")
    with pytest.raises(VideoError, match=r"empty.mp4: an empty file \(0 bytes\)"):
        FrameReader(str(tmp_path / "empty.mp4"))


def test_indices_outside_the_video_are_refused(evidence_video):
    with pytest.raises(ValueError, match="outside"):
        FrameReader(str(evidence_video)).read([48])
