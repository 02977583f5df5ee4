"""The teacher client against a real local HTTP server: retries, backoff, rate limit, data URLs, errors."""

import base64
import io

import pytest
from PIL import Image

from tests.sft.teacher_server import TeacherServer
from zoomzero_plugin.data.sft.teacher import RateLimiter, TeacherClient, TeacherConfig, openai_messages
from zoomzero_plugin.errors import ModelError, UsageError


def client(url, sleeps, **kw):
    cfg = TeacherConfig(url=url, model="teacher-x", timeout=5, **kw)
    return TeacherClient(cfg, sleep=sleeps.append)


def test_retries_transient_errors_with_exponential_backoff_and_retry_after():
    script = {1: (500, {}, "boom"), 2: (429, {"Retry-After": "7"}, "slow down"), 3: (503, {}, "busy")}
    with TeacherServer(lambda body, n: script.get(n, "<think>ok</think><answer>B</answer>")) as server:
        sleeps = []
        text = client(server.url, sleeps, backoff=0.5, backoff_max=30).chat([{"role": "user", "content": "hi"}])
    assert text == "<think>ok</think><answer>B</answer>"
    assert len(server.requests) == 4
    # attempt k waits backoff * 2^k; a Retry-After longer than that wins
    assert sleeps == [0.5, 7.0, 2.0]


def test_backoff_is_capped_and_gives_up_with_one_line():
    with TeacherServer(lambda body, n: (502, {}, "bad gateway")) as server:
        sleeps = []
        with pytest.raises(ModelError, match=r"failed 4 times; last: HTTP 502"):
            client(server.url, sleeps, retries=3, backoff=10, backoff_max=25).chat([{"role": "user", "content": "x"}])
    assert sleeps == [10, 20, 25]
    assert len(server.requests) == 4


def test_dropped_connection_and_malformed_reply_are_retried():
    script = {1: None, 2: (200, {}, '{"choices": []}')}
    with TeacherServer(lambda body, n: script.get(n, "fine")) as server:
        sleeps = []
        assert client(server.url, sleeps, backoff=0.01).chat([{"role": "user", "content": "x"}]) == "fine"
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_permanent_rejection_stops_at_once_naming_status_and_message(status):
    error = '{"error": {"message": "model teacher-x does not exist"}}'
    with TeacherServer(lambda body, n: (status, {}, error)) as server:
        with pytest.raises(ModelError, match=f"HTTP {status} model teacher-x does not exist"):
            client(server.url, []).chat([{"role": "user", "content": "x"}])
    assert len(server.requests) == 1


def test_unreachable_server_is_a_clear_error():
    sleeps = []
    with pytest.raises(ModelError, match=r"127.0.0.1:1/v1/chat/completions \(teacher-x\) failed 3 times.*refused"):
        client("http://127.0.0.1:1/v1", sleeps, retries=2, backoff=0.01).chat([{"role": "user", "content": "x"}])


def test_request_carries_model_key_and_images_as_data_urls(monkeypatch):
    monkeypatch.setenv("MY_TEACHER_KEY", "sk-test-123")
    red = Image.new("RGB", (8, 6), (255, 0, 0))
    blue = Image.new("RGB", (4, 4), (0, 0, 255))
    messages = openai_messages(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "<frame0_time0.00s><image><frame1_time2.00s><image>Q?"},
            {"role": "assistant", "content": "a"},
            {"role": "observation", "content": "obs"},
        ],
        [red, blue],
    )
    with TeacherServer(lambda body, n: "done") as server:
        client(server.url, [], api_key_env="MY_TEACHER_KEY").chat(messages)
    body, headers = server.requests[0], server.headers[0]
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert body["model"] == "teacher-x"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert [parts[0]["text"], parts[2]["text"], parts[4]["text"]] == ["<frame0_time0.00s>", "<frame1_time2.00s>", "Q?"]
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.size == (8, 6) and decoded.getpixel((0, 0)) == (255, 0, 0)


def test_no_key_no_authorization_header(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with TeacherServer(lambda body, n: "done") as server:
        client(server.url, []).chat([{"role": "user", "content": "x"}])
    assert "Authorization" not in server.headers[0]


def test_placeholder_and_image_counts_must_agree():
    img = Image.new("RGB", (4, 4))
    with pytest.raises(ValueError, match="2 images for 1"):
        openai_messages([{"role": "user", "content": "<image>"}], [img, img])
    with pytest.raises(ValueError, match="number 2 has no image"):
        openai_messages([{"role": "user", "content": "<image><image>"}], [img])


def test_rate_limiter_spaces_starts_evenly():
    now = [0.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(rpm=120, clock=lambda: now[0], sleep=sleep)  # one start per 0.5 s
    for _ in range(4):
        limiter.wait()
    assert slept == [0.5, 0.5, 0.5]
    now[0] += 10  # idle time is not banked beyond the next slot
    limiter.wait()
    limiter.wait()
    assert slept[-1] == 0.5 and len(slept) == 4


@pytest.mark.parametrize("bad", [dict(url="127.0.0.1:8000"), dict(model=""), dict(rpm=float("nan")), dict(timeout=-1)])
def test_config_errors_name_the_option(bad):
    with pytest.raises(UsageError):
        TeacherConfig(**{"url": "http://x/v1", "model": "m", **bad})


def test_reply_journal_refuses_other_settings_and_unreadable_files(tmp_path):
    from zoomzero_plugin.data.sft.sources import ReplyJournal
    from zoomzero_plugin.errors import ResumeError

    path = tmp_path / "j.jsonl"
    journal = ReplyJournal(path)
    journal.put("teacher/q/0/0", "digest-a", "reply")
    again = ReplyJournal(path)
    assert again.get("teacher/q/0/0", "digest-a") == "reply" and again.replayed == 1
    assert again.get("teacher/q/0/1", "digest-a") is None
    with pytest.raises(ResumeError, match="differs from the one journalled"):
        again.get("teacher/q/0/0", "digest-b")
    path.write_text('{"key": "a", "digest": "d", "reply": "r"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(ResumeError, match="not JSON") as refused:
        ReplyJournal(path)
    assert "--restart" in str(refused.value) and "--repair" not in str(refused.value)  # export-sft has no --repair
