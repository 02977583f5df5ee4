"""Inference modes (Zoom-Zero §5.3, Appendix D.3–D.4), each over a batch of questions.

- ``one-stage``: the coarse pass over the whole video answers and grounds.
- ``coarse-to-fine``: coarse pass, then an answer-only fine pass on the predicted spans under the same
  token budget (Eq. 3: fewer frames, more tokens each). Final answer: the fine pass's; without valid
  spans, the coarse answer (``no_spans="skip"``; or, with ``no_spans="uniform"``, a fine pass over uniform frames,
  as the authors' released code does).
- ``divide-and-conquer``: non-overlapping windows each ground and answer; confidence is the probability
  of the answer-letter token; the spans of the top-k windows are merged and a fine pass reads them.
- ``iterative``: coarse pass, then up to ``max_fine_passes - 1`` grounding passes on the previous spans (kept only
  while the spans shrink), then the answer-only fine pass. ``max_fine_passes=1`` is coarse-to-fine.
- ``agent``: VideoZoomer's ``<video_zoom>`` tool loop (:mod:`.agent`), with its own budgets (``agent``).

Every mode returns one :class:`ModeOutput` per question: the record for ``predictions.jsonl``
(``qid``, ``answer``, ``spans``, ``confidence`` + ``mode``, ``fallback`` and every pass) and its timings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..gvqa.prompts import DEFAULT_PROMPT_STYLE, PROMPT_STYLES
from ..gvqa.zoom import NO_SPANS, UNIFORM_FRAMES, ZoomBudget, ZoomPlan, plan_coarse, plan_pass, plan_zoom
from ..sections import one_of
from ..spans import Span, merge_spans, total_length
from .agent import AgentConfig, agent_mode
from .backend import Backend, SamplingParams
from .passes import PassResult, Question, answer_pass, grounding_pass
from .prediction import ModeOutput
from .prompts import part_prompt, window_prompt

# The modes' knobs that name one of a few ways (the flags of `zoomzero eval` offer the same choices).
CHOICES: dict[str, tuple[str, ...]] = {
    "prompt": PROMPT_STYLES,
    "fine_answer": ("letters", "generate"),
    "no_spans": NO_SPANS,
    "window_times": ("auto", "relative", "absolute"),
    "window_budget": ("full", "split"),
    "dc_final": ("fine", "confident"),
}


@dataclass(frozen=True)
class ModeConfig:
    """Every threshold and size of the modes; defaults are the paper's (or the authors' code's)."""

    budget: ZoomBudget = ZoomBudget()  # the same L_v for coarse, window and fine passes (paper: zoom.paper_budget)
    prompt: str = DEFAULT_PROMPT_STYLE  # paper | concise: the style of the fine-pass and window prompts
    max_new_tokens: int = 512  # grounding passes (responses ≤ 512 tokens in the paper)
    fine_answer: str = "letters"  # letters: next-token argmax over the option letters | generate
    no_spans: str = "skip"  # no valid span: skip the fine pass (the coarse answer stands) | uniform (zoom.NO_SPANS)
    uniform_frames: int = UNIFORM_FRAMES  # frames of no_spans=uniform over the whole video
    window_seconds: float = 256.0
    window_times: str = "auto"  # relative: a window is shown as a video from 0 (spans shifted back) | absolute |
    # auto: absolute for models that read frame timestamps as text (Qwen3-VL), relative otherwise (Qwen2.5-VL)
    window_budget: str = "full"  # full: every window gets L_v (authors) | split: L_v shared by the windows
    top_k: int = 4
    dc_final: str = "fine"  # fine | confident: the more confident of the fine pass and the top window
    max_fine_passes: int = 3  # iterative: fine passes in all at most, the last one answer-only
    min_shrink: float = 0.0  # iterative: a round must cut the span length by more than this fraction
    agent: AgentConfig = field(default_factory=AgentConfig)  # the agent mode's budgets, prompt and sampling

    def __post_init__(self) -> None:
        for key, allowed in CHOICES.items():
            one_of(getattr(self, key), allowed, key)
        if self.window_seconds <= 0 or self.top_k < 1 or self.max_fine_passes < 1 or self.uniform_frames < 2:
            raise ValueError(
                f"window_seconds > 0, top_k >= 1, max_fine_passes >= 1, uniform_frames >= 2 required: {self}"
            )
        if not 0 <= self.min_shrink < 1:
            raise ValueError(f"min_shrink must be in [0, 1), got {self.min_shrink}")

    def grounding_params(self) -> SamplingParams:
        return SamplingParams(max_new_tokens=self.max_new_tokens, logprobs=True)


def _predict(
    q: Question,
    mode: str,
    final: PassResult | None,
    spans: Sequence[Span],
    passes: Sequence[PassResult],
    fallback: str | None = None,
) -> ModeOutput:
    record = {
        "qid": q.qid,
        "answer": final.answer if final else None,
        "spans": [[round(s, 3), round(e, 3)] for s, e in spans],
        "confidence": None if final is None or final.confidence is None else round(final.confidence, 6),
        "mode": mode,
        "fallback": fallback,
        "passes": [p.record() for p in passes],
    }
    timing = {
        "qid": q.qid,
        "passes": [p.timing() for p in passes],
        "total_s": round(sum(sum(p.generation.timing.values()) for p in passes), 6),
    }
    return ModeOutput(record, timing)


def _coarse(backend: Backend, qs: Sequence[Question], cfg: ModeConfig) -> list[PassResult]:
    items = [(q, plan_coarse(q.duration, cfg.budget), q.coarse_prompt(cfg.prompt)) for q in qs]
    return grounding_pass(backend, items, cfg.grounding_params(), "coarse")


def uniform_plan(duration: float, cfg: ModeConfig) -> ZoomPlan:
    """``uniform_frames`` frames over the whole video under the mode's token budget."""
    return plan_coarse(duration, replace(cfg.budget, fps=cfg.uniform_frames / duration))


def _answer(
    backend: Backend, items: Sequence[tuple[Question, ZoomPlan]], name: str, cfg: ModeConfig
) -> list[PassResult]:
    return answer_pass(backend, items, name, score_letters=cfg.fine_answer == "letters", style=cfg.prompt)


def _zoom_then_answer(
    backend: Backend, qs: Sequence[Question], spans: Sequence[Sequence[Span]], cfg: ModeConfig
) -> list[PassResult | None]:
    """The fine pass on each question's spans; ``None`` where there are none (unless ``no_spans=uniform``)."""
    todo: dict[str, list[tuple[int, Question, ZoomPlan]]] = {"fine": [], "fine-uniform": []}
    for i, (q, s) in enumerate(zip(qs, spans)):
        plan = plan_zoom(list(s), q.duration, cfg.budget)
        if plan is not None:
            todo["fine"].append((i, q, plan))
        elif cfg.no_spans == "uniform":
            todo["fine-uniform"].append((i, q, uniform_plan(q.duration, cfg)))
    results: list[PassResult | None] = [None] * len(qs)
    for name, chosen in todo.items():
        for (i, _, _), r in zip(chosen, _answer(backend, [(q, p) for _, q, p in chosen], name, cfg)):
            results[i] = r
    return results


def one_stage(backend: Backend, qs: Sequence[Question], cfg: ModeConfig) -> list[ModeOutput]:
    return [_predict(q, "one-stage", c, c.spans, [c]) for q, c in zip(qs, _coarse(backend, qs, cfg))]


def _final(coarse: PassResult, fine: PassResult | None) -> tuple[PassResult, str | None]:
    if fine is None:
        return coarse, "no_spans"
    if fine.answer is None:
        return coarse, "fine_no_answer"
    return fine, None


def coarse_to_fine(backend: Backend, qs: Sequence[Question], cfg: ModeConfig) -> list[ModeOutput]:
    coarse = _coarse(backend, qs, cfg)
    fine = _zoom_then_answer(backend, qs, [c.spans for c in coarse], cfg)
    out = []
    for q, c, f in zip(qs, coarse, fine):
        final, fallback = _final(c, f)
        out.append(_predict(q, "coarse-to-fine", final, c.spans, [c] + ([f] if f else []), fallback))
    return out


def windows(duration: float, seconds: float, min_seconds: float = 1.0) -> list[Span]:
    """Non-overlapping windows of ``seconds`` covering ``[0, duration]``; a last piece shorter than
    ``min_seconds`` joins the previous window."""
    edges = [0.0]
    while edges[-1] + seconds < duration:
        edges.append(edges[-1] + seconds)
    if len(edges) > 1 and duration - edges[-1] < min_seconds:
        edges.pop()
    edges.append(duration)
    return list(zip(edges[:-1], edges[1:]))


def _window_budget(cfg: ModeConfig, n: int) -> ZoomBudget:
    if cfg.window_budget == "full" or n == 1:
        return cfg.budget
    v_min = cfg.budget.frame_tokens(cfg.budget.min_frame_pixels)
    return replace(cfg.budget, max_visual_tokens=max(int(cfg.budget.max_visual_tokens / n), int(2 * v_min) + 1))


def _ranked(results: Sequence[PassResult]) -> list[PassResult]:
    answered = [r for r in results if r.answer is not None]
    return sorted(answered, key=lambda r: -(r.confidence or 0.0))


def divide_and_conquer(backend: Backend, qs: Sequence[Question], cfg: ModeConfig) -> list[ModeOutput]:
    items, shifts, durations, owner = [], [], [], []
    absolute = cfg.window_times == "absolute" or (cfg.window_times == "auto" and backend.geometry.timestamps)
    for i, q in enumerate(qs):
        ws = windows(q.duration, cfg.window_seconds, cfg.budget.min_clip_seconds)
        budget = _window_budget(cfg, len(ws))
        for w in ws:
            items.append(
                (
                    q,
                    plan_pass([w], q.duration, budget),
                    window_prompt(q.question, q.options, w, q.duration, absolute, cfg.prompt),
                )
            )
            shifts.append(0.0 if absolute else w[0])
            durations.append(q.duration if absolute else w[1] - w[0])
            owner.append(i)
    results = grounding_pass(backend, items, cfg.grounding_params(), "window", shifts, durations)
    per_q: list[list[PassResult]] = [[] for _ in qs]
    for i, r in zip(owner, results):
        if absolute:  # keep only what lies inside the window the model saw
            (w,) = [(c.start, c.end) for c in r.plan.clips]
            r.spans = _intersect(r.spans, [w])
        per_q[i].append(r)
    top = [_ranked(rs)[: cfg.top_k] for rs in per_q]
    aggregate = [merge_spans([s for r in t for s in r.spans]) for t in top]
    fine = _zoom_then_answer(backend, qs, aggregate, cfg)
    out = []
    for q, rs, t, agg, f in zip(qs, per_q, top, aggregate, fine):
        best = t[0] if t else rs[0]
        final, fallback = _final(best, f)
        if cfg.dc_final == "confident" and final is f and t and (t[0].confidence or 0) > (f.confidence or 0):
            final, fallback = t[0], "window_more_confident"
        out.append(_predict(q, "divide-and-conquer", final, agg, rs + ([f] if f else []), fallback))
    return out


def _intersect(a: Sequence[Span], b: Sequence[Span]) -> list[Span]:
    """(∪a) ∩ (∪b) as merged spans (zero-length pieces dropped)."""
    a, b = merge_spans(a), merge_spans(b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def iterative_zoom(backend: Backend, qs: Sequence[Question], cfg: ModeConfig) -> list[ModeOutput]:
    coarse = _coarse(backend, qs, cfg)
    passes = [[c] for c in coarse]
    spans = [list(c.spans) for c in coarse]
    answered = list(coarse)  # the latest pass with a valid answer
    active = [i for i, s in enumerate(spans) if s]
    stops: list[str | None] = [None] * len(qs)
    for round_ in range(1, cfg.max_fine_passes):
        if not active:
            break
        items = []
        for i in active:
            q, plan = qs[i], plan_zoom(spans[i], qs[i].duration, cfg.budget)
            shown = [(c.start, c.end) for c in plan.clips]
            items.append((q, plan, part_prompt(q.question, q.options, shown, q.duration, cfg.prompt)))
        results = grounding_pass(backend, items, cfg.grounding_params(), f"refine{round_}")
        still = []
        for i, r in zip(active, results):
            passes[i].append(r)
            if r.answer is not None:
                answered[i] = r
            new = _intersect(r.spans, spans[i])
            r.spans = new
            if new and total_length(new) < total_length(spans[i]) * (1 - cfg.min_shrink):
                spans[i] = new
                still.append(i)
            else:
                stops[i] = "spans_stopped_shrinking" if new else "refine_no_spans"
        active = still
    fine = _zoom_then_answer(backend, qs, spans, cfg)
    out = []
    for i, (q, f) in enumerate(zip(qs, fine)):
        final, fallback = _final(answered[i], f)
        record = _predict(q, "iterative", final, spans[i], passes[i] + ([f] if f else []), fallback)
        record.record["stop"] = stops[i] or ("rounds" if spans[i] else "no_spans")
        out.append(record)
    return out


MODES: dict[str, Callable[[Backend, Sequence[Question], ModeConfig], list[ModeOutput]]] = {
    "one-stage": one_stage,
    "coarse-to-fine": coarse_to_fine,
    "divide-and-conquer": divide_and_conquer,
    "iterative": iterative_zoom,
    "agent": agent_mode,
}


def predict(
    backend: Backend, questions: Sequence[Question], mode: str, cfg: ModeConfig = ModeConfig()
) -> list[ModeOutput]:
    """Run ``mode`` over ``questions`` (one batch of backend calls per pass)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {sorted(MODES)}")
    return MODES[mode](backend, list(questions), cfg)
