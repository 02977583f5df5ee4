"""Synthetic mp4 files whose content changes at known seconds, so "evidence" lives in known spans."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

Color = tuple[int, int, int]

COLORS: dict[str, Color] = {
    "red": (220, 30, 30),
    "green": (30, 200, 30),
    "blue": (30, 60, 230),
    "yellow": (230, 220, 30),
    "magenta": (210, 40, 210),
    "cyan": (30, 210, 210),
}


MARKS: dict[str, Color] = {"white": (235, 235, 235)}  # colours a video may show that no option names (cues)


@dataclass(frozen=True)
class Evidence:
    """A coloured square shown from ``start`` to ``end`` seconds (a colour of :data:`COLORS` or :data:`MARKS`), centred,
    its side ``size`` times the frame's shorter side (None: two thirds, rounded down to an even number of pixels)."""

    start: float
    end: float
    color: str = "red"
    size: float | None = None


def render_frame(t: float, width: int, height: int, evidence: tuple[Evidence, ...]) -> np.ndarray:
    """The frame at time ``t``: grey background, a bar that moves with time, and any visible evidence."""
    frame = np.full((height, width, 3), 60, dtype=np.uint8)
    bar = int((t * 37) % max(width - 8, 1))
    frame[:, bar : bar + 8] = 110
    for item in evidence:
        if item.start <= t < item.end:
            r = min(width, height) // 3 if item.size is None else int(min(width, height) * item.size) // 2
            cy, cx = height // 2, width // 2
            frame[cy - r : cy + r, cx - r : cx + r] = COLORS.get(item.color) or MARKS[item.color]
    return frame


def write_video(
    path: str | Path,
    duration: float = 8.0,
    fps: int = 4,
    width: int = 224,
    height: int = 168,
    evidence: tuple[Evidence, ...] | list[Evidence] = (),
) -> Path:
    """Encode an H.264 mp4 of ``duration`` seconds; returns ``path``. Width and height must be even."""
    import av

    if width % 2 or height % 2:
        raise ValueError(f"H.264 needs even frame sizes, got {width}x{height}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    evidence = tuple(evidence)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(int(round(duration * fps))):
            image = render_frame(i / fps, width, height, evidence)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def dominant_color(frame: np.ndarray) -> str | None:
    """Name of the evidence colour at the centre of an (H, W, 3) or (3, H, W) frame, or None."""
    if frame.shape[0] == 3 and frame.shape[-1] != 3:
        frame = np.moveaxis(frame, 0, -1)
    h, w = frame.shape[:2]
    centre = np.asarray(frame[h // 2 - 2 : h // 2 + 2, w // 2 - 2 : w // 2 + 2], dtype=float).reshape(-1, 3).mean(0)
    best, dist = None, 80.0
    for name, rgb in COLORS.items():
        d = float(np.abs(centre - np.asarray(rgb)).max())
        if d < dist:
            best, dist = name, d
    return best
