"""The scheduler without a round barrier, on a stand-in engine whose requests take a scripted number of steps."""

import threading
from concurrent.futures import Future

import pytest

from zoomzero_plugin.engine.schedule import continuous


class StepEngine:
    """Each request takes ``steps`` engine steps; every step is logged with the requests in flight."""

    def __init__(self):
        self.running, self.log = {}, []

    @property
    def pending(self):
        return len(self.running)

    def submit(self, job, steps):
        self.running[job] = steps

    def step(self):
        self.log.append(sorted(self.running))
        for job in self.running:
            self.running[job] -= 1
        done = [job for job, left in self.running.items() if left == 0]
        for job in done:
            del self.running[job]
        return [(job, f"turn of {job}") for job in done]


def run(turns, decodes=None, events=None):
    """``turns``: per job, the steps each of its turns takes; ``decodes``: per (job, turn), a Future its next turn
    waits for. Returns the engine's step log and what happened, in order."""
    engine, done = StepEngine(), dict.fromkeys(turns, 0)
    events = [] if events is None else events
    decodes = decodes or {}

    def submit(jobs):
        for job in jobs:
            events.append(f"submit {job}{done[job]}")
            engine.submit(job, turns[job][done[job]])

    def advance(finished):
        going = {}
        for job, _ in finished:
            events.append(f"end {job}{done[job]}")
            done[job] += 1
            if done[job] < len(turns[job]):
                going[job] = decodes.get((job, done[job] - 1))
        return going

    steps = continuous(engine, sorted(turns), submit, advance)
    assert steps == len(engine.log)
    return engine.log, events


def test_a_short_trajectory_goes_on_while_a_long_turn_generates():
    log, events = run({"a": [1, 1, 1], "b": [5]})
    assert len(log) == 5, "round by round: 5 + 1 + 1 steps"
    assert events.index("submit a2") < events.index("end b0"), "a's later turns ran beside b's first"
    assert log == [["a", "b"]] * 3 + [["b"]] * 2


class ArrivesAfter(Future):
    """A decode that finishes only once ``event`` has happened, so the order does not depend on a timer. A scheduler
    that blocks on it before then would wait forever: after 10 s the decode fails instead, naming that."""

    def __init__(self, event):
        super().__init__()
        self.event = event
        self.give_up = threading.Timer(
            10, self.set_exception, args=(AssertionError(f"the scheduler waited for frames before {event}"),)
        )
        self.give_up.start()

    def seen(self, event):
        if event == self.event:
            self.give_up.cancel()
            self.set_result(None)


class Events(list):
    def __init__(self, watcher):
        super().__init__()
        self.watcher = watcher

    def append(self, event):
        super().append(event)
        self.watcher.seen(event)


def test_a_turn_waits_for_its_frames_while_the_engine_serves_the_others():
    frames = ArrivesAfter("end b0")  # a's frames are not there until b's two-step turn has ended
    log, events = run({"a": [1, 1], "b": [2]}, decodes={("a", 0): frames}, events=Events(frames))
    assert events[:4] == ["submit a0", "submit b0", "end a0", "end b0"], "b went on while a's frames decoded"
    assert events[4:] == ["submit a1", "end a1"] and log == [["a", "b"], ["b"], ["a"]]


def test_a_failed_decode_stops_the_run():
    failed = Future()
    failed.set_exception(RuntimeError("broken clip"))
    with pytest.raises(RuntimeError, match="broken clip"):
        run({"a": [1, 1]}, decodes={("a", 0): failed})
