"""What the ``zoomzero`` model reads from one lmms-eval request, and what it replies.

A request names its document (task, split, doc id) and carries the task's prompt text (``doc_to_text``) and its
``doc_to_visual``. Two kinds of documents:

- **dataset rows** (``prompt``, ``videos`` and ``answer`` columns, as ``zoomzero data convert`` writes them; the
  tasks of ``zoomzero lmms-eval tasks``): the question is the row's, read exactly as ``zoomzero eval`` reads it,
  and the reply cites the spans in Zoom-Zero's template, ``<answer>B</answer><glue>[(12.5, 20.0)]</glue>``
  (an empty ``<answer></answer>`` when the mode found no letter);
- **any other multiple-choice video task** (lmms-eval's LongVideoBench, Video-MME, MLVU, LVBench …): the video is
  ``doc_to_visual``'s one path and its duration is read from the file; the question and its options are read from
  the prompt (:func:`lettered_options`); the reply is the bare letter, or an empty reply when the mode found none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import DataError, UsageError, VideoError
from ...ground_truth import LETTERS
from ...inference.passes import Question
from ...rows import ANSWER_KEY, PROMPT_KEY, VIDEO_KEY
from ...video import check_video_file, probe_duration

ROW_KEYS = (PROMPT_KEY, VIDEO_KEY, ANSWER_KEY)
# An option line: "A. text", "A) text", "A: text" or "(A) text"; the letter, then whitespace or the line's end.
_OPTION = re.compile(r"[ \t]*(?:\(([A-Z])\)|([A-Z])[.):])(?:[ \t]+|$)")
_OPTIONS_LINE = re.compile(r"(?:options|choices)\s*:?", re.IGNORECASE)
_QUESTION_LABEL = re.compile(r"question\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Asked:
    """One request as the modes see it. ``grounded``: the document is a dataset row (its reply cites spans)."""

    question: Question
    grounded: bool
    task: str


def is_row(doc: Mapping[str, Any]) -> bool:
    """The document is a dataset row (``prompt``, ``videos`` and ``answer`` columns)."""
    return all(key in doc for key in ROW_KEYS)


def _option_at(line: str) -> tuple[str, str] | None:
    m = _OPTION.match(line)
    return None if m is None else (m.group(1) or m.group(2), line[m.end() :].strip())


def _question_text(lines: Sequence[str]) -> str:
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _OPTIONS_LINE.fullmatch(lines[-1].strip()):
        lines.pop()
    text = "\n".join(lines).strip()
    label = _QUESTION_LABEL.match(text)
    return text[label.end() :] if label else text


def lettered_options(prompt: str) -> tuple[str, tuple[str, ...]] | None:
    """The question and options of a multiple-choice prompt, or None when it has no run of two or more options.

    The options are the last run of consecutive lines marked A, B, C … in order (``A. text``, ``A) text``,
    ``A: text`` or ``(A) text``); the question is the text before them, less an ``Options:`` line that closes it
    and a ``Question:`` label that opens it. What follows the options (an instruction to answer with a letter) is
    left out: every mode writes its own instruction. One pass over the lines: linear time.
    """
    lines = prompt.splitlines()
    best: tuple[int, list[str]] | None = None
    start, options = 0, []
    for i, line in enumerate(lines):
        found = _option_at(line)
        if found and options and len(options) < len(LETTERS) and found[0] == LETTERS[len(options)]:
            options.append(found[1])
            continue
        if len(options) >= 2:
            best = (start, options)
        start, options = (i, [found[1]]) if found and found[0] == "A" else (0, [])
    if len(options) >= 2:
        best = (start, options)
    if best is None:
        return None
    return _question_text(lines[: best[0]]), tuple(best[1])


def _video_of(visuals: Any, where: str) -> str:
    if isinstance(visuals, str):
        visuals = [visuals]
    paths = list(visuals) if isinstance(visuals, (list, tuple)) else [visuals]
    if len(paths) != 1 or not isinstance(paths[0], str):
        kinds = ", ".join(sorted({type(p).__name__ for p in paths})) or "nothing"
        raise UsageError(
            f"{where}: doc_to_visual gives {len(paths)} item(s) ({kinds}); zoomzero reads one video "
            "file per question (a task that passes frames as images is not supported)"
        )
    check_video_file(paths[0])
    return paths[0]


def _duration(video: str) -> float:
    try:
        return probe_duration(video)
    except Exception as e:  # noqa: BLE001  (decord raises its own error types)
        raise VideoError(f"{video}: cannot be read ({type(e).__name__}: {str(e).strip()[:200]})") from None


def ask(doc: Mapping[str, Any], prompt: str, doc_to_visual: Callable[[Any], Any], task: str, doc_id: int) -> Asked:
    """The question of one request (``prompt``: the task's ``doc_to_text``). Raises DataError, VideoError or
    UsageError naming the task and document."""
    where = f"task {task}, document {doc_id}"
    if is_row(doc):
        try:
            question = Question.from_row(dict(doc))
        except (KeyError, ValueError) as e:
            raise DataError(f"{where}: a dataset row whose {ANSWER_KEY} column does not parse: {e}") from None
        check_video_file(question.video)
        return Asked(question, grounded=True, task=task)
    found = lettered_options(prompt)
    if found is None:
        raise UsageError(
            f"{where}: its prompt has no lettered options (A. … B. …); zoomzero's modes answer "
            "multiple-choice questions"
        )
    text, options = found
    given = doc.get("question")
    if isinstance(given, str) and given.strip() and given.strip() in text:
        text = given.strip()  # the document's own question, without the task's instruction lines
    video = _video_of(doc_to_visual(doc), where)
    return Asked(Question(f"{task}/{doc_id}", video, text, options, _duration(video)), grounded=False, task=task)


def reply(record: Mapping[str, Any], grounded: bool) -> str:
    """What the model says for one prediction record: the cited spans for a dataset row, else the bare letter."""
    letter = record.get("answer") or ""
    if not grounded:
        return letter
    glue = ", ".join(f"({float(s)!r}, {float(e)!r})" for s, e in record.get("spans") or ())
    return f"<answer>{letter}</answer><glue>[{glue}]</glue>"
