"""lmms-eval's ``zoomzero`` model: every inference mode of this package behind lmms-eval's model API.

lmms-eval finds it through the ``lmms_eval.models`` entry point (:mod:`.manifest`) and builds it with
:meth:`ZoomZero.create_from_arg_string` from ``--model_args`` (:mod:`.model_args`: ``zoomzero eval``'s options).
It implements ``generate_until``: every request becomes a :class:`~zoomzero_plugin.inference.passes.Question`
(:mod:`.questions`), the mode runs over them ``batch_size`` at a time, as ``zoomzero eval`` runs it, and each reply
is the answer (with the cited spans for a dataset row); ``predictions=FILE`` keeps every whole record. The visual
budget is the paper's for the task's benchmark (by its name: ``nextgqa``, ``videomme``, ``longvideobench_val_v`` …)
unless ``benchmark=`` or a budget option says otherwise. The task's own ``generation_kwargs`` are not used: the
mode's budgets decide. ``loglikelihood`` and multi-round tasks are refused.

A problem the user can fix (a bad ``--model_args``, a missing checkpoint, an unreadable video) ends the run with
one line, ``lmms-eval --model zoomzero: …`` (``SystemExit``), instead of a traceback from inside lmms-eval.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms
from lmms_eval.utils import simple_parse_args_string
from tqdm import tqdm

from ...errors import UsageError, ZoomzeroError, one_line
from ...files import check_writable, write_text
from ...inference.backend import Backend, load_backend
from ...inference.modes import predict
from ...journal import Journal
from .model_args import ModelArgs, as_model_args, benchmark_of, parse_model_args
from .questions import Asked, ask, reply

PROG = "lmms-eval --model zoomzero"


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A :class:`ZoomzeroError` leaves as ``SystemExit`` with one line (lmms-eval prints a traceback for any
    ``Exception`` it catches, and catches every one)."""
    try:
        yield
    except ZoomzeroError as e:
        raise SystemExit(one_line(PROG, e)) from None


class ZoomZero(lmms):
    """The modes of ``zoomzero eval`` (one-stage, coarse-to-fine, divide-and-conquer, iterative, agent) as an
    lmms-eval model. ``model_args``: ``zoomzero eval``'s options (:func:`.model_args.parse_model_args`);
    ``settings``: lmms-eval's own settings (``batch_size``, ``device``); ``loaded``: an already built backend (then
    ``model=`` only labels it). Raises :class:`UsageError` / :class:`ModelError` before anything is loaded."""

    is_simple = True

    def __init__(self, settings: Mapping[str, Any] | None = None, loaded: Backend | None = None, **model_args: Any):
        super().__init__()
        if loaded is not None:
            model_args.setdefault("model", getattr(loaded, "name", "backend"))
        self.args: ModelArgs = parse_model_args(model_args, settings)
        self.journal: Journal | None = None  # predictions=FILE: every prediction record, durably
        if self.args.predictions:
            write_text(check_writable(self.args.predictions, "predictions"), "")
            self.journal = Journal(self.args.predictions)
        if loaded is None:
            kwargs: dict[str, Any] = {**self.args.backend_kwargs, "batch_size": self.args.batch_size}
            if self.args.backend == "vllm" and self.args.mode == "agent":
                kwargs["max_images"] = self.args.config(None).agent.budget.max_images
            try:
                loaded = load_backend(self.args.backend, self.args.model, **kwargs)
            except ZoomzeroError as e:  # its message names zoomzero eval's flags (--model, --backend)
                raise type(e)(as_model_args(str(e))) from e
        self.backend = loaded

    @classmethod
    def create_from_arg_string(cls, arg_string: str | Mapping[str, Any], additional_config: dict | None = None):
        """lmms-eval's constructor: ``--model_args`` apart from its own settings (so ``device=`` may be in both)."""
        with one_line_errors():
            if isinstance(arg_string, Mapping):
                given = dict(arg_string)
            else:
                try:
                    given = simple_parse_args_string(arg_string or "")
                except ValueError:
                    raise UsageError(
                        f"--model_args {arg_string!r}: expected key=value pairs separated by commas, "
                        "e.g. model=CHECKPOINT,mode=coarse-to-fine"
                    ) from None
            return cls(settings=additional_config or {}, **given)

    def _asked(self, requests: Sequence[Instance]) -> list[Asked]:
        """Every request's question, each checked (files, options) before the first pass runs."""
        out = []
        for request in requests:
            prompt, _, doc_to_visual, doc_id, task, split = request.args
            out.append(ask(self.task_dict[task][split][doc_id], prompt, doc_to_visual, task, doc_id))
        if self.journal is not None:  # one line per question id in the file
            first: dict[str, str] = {}
            for a in out:
                if first.setdefault(a.question.qid, a.task) != a.task:
                    raise UsageError(
                        f"predictions={self.args.predictions}: question {a.question.qid} is in the tasks "
                        f"{first[a.question.qid]} and {a.task}; run them one at a time"
                    )
        return out

    def _run(self, asked: Sequence[Asked], benchmark: str | None) -> list[str]:
        cfg = self.args.config(benchmark, self.backend.geometry)
        questions = [a.question for a in asked]
        try:
            predictions = predict(self.backend, questions, self.args.mode, cfg)
        except ZoomzeroError as e:
            named = [q.qid for q in questions if q.video in str(e)] or [q.qid for q in questions]
            raise type(e)(f"question {', '.join(named)}: {e}") from e
        if self.journal is not None:
            self.journal.append(p.record for p in predictions)
        return [reply(p.record, a.grounded) for a, p in zip(asked, predictions)]

    def generate_until(self, requests: list[Instance]) -> list[str]:
        """One reply per request, in order. Requests are grouped by task (one budget each) and run
        ``batch_size`` at a time in their order."""
        with one_line_errors():
            asked = self._asked(requests)
            replies: list[str] = [""] * len(asked)
            by_task: dict[str, list[int]] = {}
            for i, a in enumerate(asked):
                by_task.setdefault(a.task, []).append(i)
            size = self.args.batch_size
            with tqdm(total=len(asked), disable=self.rank != 0, desc=f"zoomzero {self.args.mode}") as bar:
                for task, indices in by_task.items():
                    for k in range(0, len(indices), size):
                        chunk = indices[k : k + size]
                        for i, text in zip(chunk, self._run([asked[i] for i in chunk], benchmark_of(task))):
                            replies[i] = text
                        bar.update(len(chunk))
            return replies

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        with one_line_errors():
            raise UsageError(
                "zoomzero answers by generating (generate_until); tasks of output_type loglikelihood "
                "or multiple_choice are not supported: use the task's generate_until variant"
            )

    def generate_until_multi_round(self, requests: list[Instance]) -> list[str]:
        with one_line_errors():
            raise UsageError("zoomzero runs its own turns (mode=agent); multi-round tasks are not supported")
