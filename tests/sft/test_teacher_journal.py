"""The teacher's reply journal replays a reply only for the very request it answered: every field of the request
(the frames shown, the model, its sampling, the agent's budgets) is part of the journal's digest."""

from dataclasses import replace
from types import SimpleNamespace

import pytest
from PIL import Image

from zoomzero_plugin.agent import AgentBudget
from zoomzero_plugin.data.sft.sources import ReplyJournal, TeacherSession
from zoomzero_plugin.data.sft.teacher import TeacherConfig
from zoomzero_plugin.errors import ResumeError

MESSAGES = [{"role": "system", "content": "agent"}, {"role": "user", "content": "<image><image>Which colour?"}]


class Client:
    """A teacher that counts what it is asked."""

    def __init__(self, cfg: TeacherConfig):
        self.cfg, self.asked = cfg, 0

    def chat(self, messages):
        self.asked += 1
        return f"reply {self.asked}"


def frames():
    return SimpleNamespace(get=lambda indices: [Image.new("RGB", (4, 4), (i % 256, 0, 0)) for i in indices])


def session(path, cfg=TeacherConfig("http://teacher/v1", "m"), budget=AgentBudget()):
    return TeacherSession(Client(cfg), ReplyJournal(path), budget)


def test_the_same_request_is_replayed(tmp_path):
    first = session(tmp_path / "j.jsonl")
    assert first.reply("q/0", MESSAGES, [0, 30], frames) == "reply 1"
    again = session(tmp_path / "j.jsonl")
    assert again.reply("q/0", MESSAGES, [0, 30], frames) == "reply 1" and again.client.asked == 0


@pytest.mark.parametrize("change", ["frames", "temperature", "max_new_tokens", "model", "budget"])
def test_a_request_that_differs_in_any_field_is_not_replayed(tmp_path, change):
    cfg, budget, shown = TeacherConfig("http://teacher/v1", "m"), AgentBudget(), [0, 30]
    session(tmp_path / "j.jsonl", cfg, budget).reply("q/0", MESSAGES, shown, frames)
    if change == "frames":
        shown = [0, 60]  # the same text over other frames
    elif change == "budget":
        budget = replace(budget, max_calls=3)
    else:
        cfg = replace(cfg, **{change: {"temperature": 0.0, "max_new_tokens": 512, "model": "m2"}[change]})
    with pytest.raises(ResumeError, match="differs from the one journalled"):
        session(tmp_path / "j.jsonl", cfg, budget).reply("q/0", MESSAGES, shown, frames)
