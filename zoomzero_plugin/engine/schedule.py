"""Turn by turn without a round barrier: each trajectory's next turn goes to the engine as soon as it is ready.

A *job* (one trajectory) alternates between the engine (its turn generating) and the caller (reading the turn, then
maybe decoding the frames its observation shows). Round by round, one engine call per round serves every job still
going, so each waits for the slowest turn of its round, and the engine waits while the round's clips decode.
:func:`continuous` drives a request-level engine (:class:`Stream`: an
:class:`~zoomzero_plugin.engine.stream.EngineStream` behind the caller's request building) one step at a
time instead: a job whose turn ended is read at once; its next turn is submitted at once, or, when its observation
shows frames, as soon as their decoding (started in the decode threads) is done, while the other jobs keep generating.
What each job sees and says is the same as round by round; only when the engine runs it differs.

:data:`SCHEDULES` names the two: ``continuous`` (this module) and ``rounds``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any, Protocol

SCHEDULES = ("continuous", "rounds")


def check_schedule(schedule: str, where: str) -> None:
    if schedule not in SCHEDULES:
        raise ValueError(f"{where} must be one of {list(SCHEDULES)}, got {schedule!r}")


class Stream(Protocol):
    """A request-level engine as :func:`continuous` drives it: requests in flight, one step at a time."""

    @property
    def pending(self) -> int: ...

    def step(self) -> Sequence[tuple[Hashable, Any]]: ...  # the requests this step finished: (job, its result, …)


Submit = Callable[[list[Hashable]], None]  # send these jobs' next turns to the stream
# read finished turns ((job, result, …) as the stream gives them); for each job that goes on: None when its next turn
# is ready now, or the Future of the decoding it waits for. Jobs that ended are left out.
Advance = Callable[[Sequence[tuple[Hashable, Any]]], Mapping[Hashable, Future | None]]


def continuous(stream: Stream, first: Sequence[Hashable], submit: Submit, advance: Advance) -> int:
    """Run every job from its first turn (``first``: submitted at once) to its end; returns the engine steps taken.

    Between two engine steps: jobs whose decoding ended are submitted; after a step, its finished turns are advanced
    together and the jobs ready at once are submitted. With nothing in flight and decodes running, it waits for the
    first decode to end. An error in a decode is raised here (the caller aborts what is in flight)."""
    if first:
        submit(list(first))
    decoding: dict[Hashable, Future] = {}
    steps = 0
    while stream.pending or decoding:
        ready = [job for job, task in decoding.items() if task.done()]
        if not ready and not stream.pending:
            wait(list(decoding.values()), return_when=FIRST_COMPLETED)
            continue
        for job in ready:
            decoding.pop(job).result()
        if ready:
            submit(ready)
        if not stream.pending:
            continue
        finished = stream.step()
        steps += 1
        if finished:
            now = []
            for job, task in advance(finished).items():
                if task is None:
                    now.append(job)
                else:
                    decoding[job] = task
            if now:
                submit(now)
    return steps
