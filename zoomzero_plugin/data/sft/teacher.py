"""A client for any OpenAI-compatible chat endpoint (``POST {url}/chat/completions``): the SFT teacher.

Images travel as data URLs (``data:image/png;base64,…``) in ``image_url`` content parts. Transient
failures (connection refused or reset, timeouts, HTTP 408/409/425/429/5xx, a reply without a message)
are retried with exponential backoff (``backoff · 2^k`` seconds, capped, or the server's ``Retry-After``);
a request the server rejects for good (400, 401, 403, 404, 422) stops at once with the server's words.
A rate limit spaces requests at least ``60 / rpm`` seconds apart across threads.

The API key comes from an environment variable (``api_key_env``; none set → no ``Authorization`` header,
as local vLLM/SGLang servers expect). The key is never logged nor written anywhere.
"""

from __future__ import annotations

import base64
import io
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...agent.budget import AgentBudget
from ...errors import ModelError, UsageError

IMAGE_PLACEHOLDER = "<image>"
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class TeacherConfig:
    """Where the teacher is and how to ask it. Times in seconds; ``rpm`` 0 means no rate limit."""

    url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 1.0
    max_new_tokens: int = AgentBudget.max_new_tokens  # tokens per reply (the request's max_tokens)
    timeout: float = 300.0
    retries: int = 6
    backoff: float = 1.0
    backoff_max: float = 60.0
    rpm: float = 0.0

    def __post_init__(self):
        if not self.url.startswith(("http://", "https://")):
            raise UsageError(f"--teacher-url {self.url!r}: give an http(s) URL such as http://127.0.0.1:8000/v1")
        if not self.model:
            raise UsageError("--teacher-model is empty: name the model the endpoint serves")
        for name in ("timeout", "backoff", "backoff_max", "rpm", "max_new_tokens", "retries"):
            value = getattr(self, name)
            if not value >= 0 or value == float("inf"):
                raise UsageError(f"teacher {name} {value!r}: must be a finite number >= 0")

    @property
    def endpoint(self) -> str:
        url = self.url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"


class RateLimiter:
    """At most ``rpm`` starts per minute, evenly spaced; thread-safe. ``rpm`` 0: no waiting."""

    def __init__(
        self, rpm: float, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
    ):
        self.interval = 60.0 / rpm if rpm > 0 else 0.0
        self._clock, self._sleep = clock, sleep
        self._next = float("-inf")
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self._sleep(start - now)


class _Transient(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


class TeacherClient:
    """``chat(messages) -> str``: the assistant text of one completion, after retries.

    ``opener`` and ``sleep`` are injectable for tests; ``requests_sent`` counts HTTP attempts.
    """

    def __init__(
        self,
        cfg: TeacherConfig,
        opener: Callable[..., Any] = urllib.request.urlopen,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.cfg = cfg
        self._open, self._sleep = opener, sleep
        self.limiter = RateLimiter(cfg.rpm, clock=clock, sleep=sleep)
        self.requests_sent = 0
        self._count = threading.Lock()

    def body(self, messages: Sequence[dict[str, Any]]) -> bytes:
        """The exact JSON request body for ``messages`` (stable: used to key resume journals)."""
        return json.dumps(
            {
                "model": self.cfg.model,
                "messages": list(messages),
                "temperature": self.cfg.temperature,
                "max_tokens": self.cfg.max_new_tokens,
                "n": 1,
            },
            ensure_ascii=False,
            sort_keys=True,
        ).encode("utf-8")

    def chat(self, messages: Sequence[dict[str, Any]]) -> str:
        payload = self.body(messages)
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.cfg.api_key_env, "") if self.cfg.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last = ""
        for attempt in range(self.cfg.retries + 1):
            self.limiter.wait()
            try:
                return self._post(payload, headers)
            except _Transient as e:
                last = str(e)
                if attempt == self.cfg.retries:
                    break
                delay = min(self.cfg.backoff * 2**attempt, self.cfg.backoff_max)
                self._sleep(max(delay, min(e.retry_after or 0.0, self.cfg.backoff_max)))
        raise ModelError(
            f"teacher {self.cfg.endpoint} ({self.cfg.model}) failed {self.cfg.retries + 1} times; "
            f"last: {last}. Check the server, or raise --teacher-retries"
        )

    def _post(self, payload: bytes, headers: dict[str, str]) -> str:
        request = urllib.request.Request(self.cfg.endpoint, data=payload, headers=headers, method="POST")
        with self._count:
            self.requests_sent += 1
        try:
            with self._open(request, timeout=self.cfg.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = _server_message(e)
            if e.code in RETRY_STATUS:
                raise _Transient(f"HTTP {e.code} {detail}", _retry_after(e.headers)) from None
            hint = " (is the API key in $%s right?)" % self.cfg.api_key_env if e.code in (401, 403) else ""
            raise ModelError(
                f"teacher {self.cfg.endpoint} rejected the request for model {self.cfg.model!r}: "
                f"HTTP {e.code} {detail}{hint}"
            ) from None
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as e:
            raise _Transient(f"{type(e).__name__}: {getattr(e, 'reason', e)}") from None
        try:
            reply = json.loads(raw)
            content = reply["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _Transient(f"reply without choices[0].message.content: {raw[:200]!r}") from None
        if not isinstance(content, str):
            raise _Transient(f"choices[0].message.content is {type(content).__name__}, not text")
        return content


def _server_message(error: urllib.error.HTTPError) -> str:
    try:
        body = error.read()[:2000].decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - the status alone still says enough
        return str(error.reason or "")
    try:
        parsed = json.loads(body)
        message = parsed.get("error", parsed)
        message = message.get("message", message) if isinstance(message, dict) else message
        return str(message)[:300]
    except (ValueError, AttributeError):
        return body.strip()[:300]


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def image_data_url(image, fmt: str = "PNG") -> str:
    """``data:image/png;base64,…`` for a PIL image, a path, or a ``numpy`` HWC uint8 array."""
    from PIL import Image

    if isinstance(image, (str, Path)):
        data = Path(image).read_bytes()
        kind = Image.open(io.BytesIO(data)).format or fmt
        return f"data:image/{kind.lower()};base64,{base64.b64encode(data).decode('ascii')}"
    if not isinstance(image, Image.Image):
        image = Image.fromarray(image)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format=fmt)
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def openai_messages(
    messages: Sequence[dict[str, str]], images: Sequence[Any], fmt: str = "PNG"
) -> list[dict[str, Any]]:
    """Chat messages with ``<image>`` placeholders → OpenAI content parts, images as data URLs in order.

    Roles ``observation`` and ``tool`` become ``user`` (the tool's reply is a user turn, as the released
    VideoZoomer code sends it). Raises ``ValueError`` when placeholders and images differ in number.
    """
    out, used = [], 0
    for message in messages:
        role = "user" if message["role"] in ("observation", "tool") else message["role"]
        pieces = message["content"].split(IMAGE_PLACEHOLDER)
        if len(pieces) == 1:
            out.append({"role": role, "content": message["content"]})
            continue
        parts: list[dict[str, Any]] = []
        for i, text in enumerate(pieces):
            if text:
                parts.append({"type": "text", "text": text})
            if i < len(pieces) - 1:
                if used >= len(images):
                    raise ValueError(f"{IMAGE_PLACEHOLDER} number {used + 1} has no image ({len(images)} given)")
                parts.append({"type": "image_url", "image_url": {"url": image_data_url(images[used], fmt)}})
                used += 1
        out.append({"role": role, "content": parts})
    if used != len(images):
        raise ValueError(f"{len(images)} images for {used} {IMAGE_PLACEHOLDER} placeholders")
    return out
