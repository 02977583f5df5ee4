"""``zoomzero eval --mode agent`` on vLLM's CPU engine without a round barrier (``--agent-schedule continuous``) and
round by round: the same predictions, word for word. The engine is in float32: vLLM's structured outputs (which keep
the random model in the protocol) need float32 logits on a CPU."""

from __future__ import annotations

import pytest

from zoomzero_plugin.synthetic.benchmark import make_benchmark


@pytest.fixture(scope="module")
def backend(vllm_model_dir):
    from zoomzero_plugin.inference.vllm_backend import VLLMBackend

    backend = VLLMBackend(
        str(vllm_model_dir),
        batch_size=8,
        max_images=128,
        enforce_eager=True,
        max_model_len=8192,
        seed=0,
        dtype="float32",
    )
    yield backend
    backend.shutdown()


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=3, seed=3)


def test_agent_mode_without_a_round_barrier_predicts_word_for_word_as_round_by_round(backend, rows, monkeypatch):
    """``--agent-schedule continuous`` (each question's next turn to the engine as soon as its clip is decoded) vs
    ``rounds``: the same records, greedy, the model's own words, in fewer engine steps. vLLM's structured outputs keep
    the random model in the protocol: two calls (a reversed segment is an error turn), then an answer; each turn's
    think is at most N letters, and greedy, this model writes all N: one question's turn is long in each round."""
    from dataclasses import replace

    from vllm.sampling_params import StructuredOutputsParams

    from zoomzero_plugin.agent import AgentBudget
    from zoomzero_plugin.engine.stream import EngineMeter, metered
    from zoomzero_plugin.inference.agent import AgentConfig
    from zoomzero_plugin.inference.modes import ModeConfig, predict
    from zoomzero_plugin.inference.passes import Question
    from zoomzero_plugin.rows import read_rows

    questions = [Question.from_row(r) for r in read_rows(rows)[:3]]
    longest = {q.qid: k for k, q in enumerate(questions)}  # question k's long turn is turn k
    params = backend._params

    def steered(request, sampling):
        qid, turn = request.tag.split("#")
        think = "[a-z]{1,%d}" % (60 if int(turn) == longest[qid] else 2)
        act = (
            r'<video_zoom>\{"segment": \[(1|5), (3|9)\], "fps": (1|2)\}</video_zoom>'
            if int(turn) < 2
            else "<answer>[A-D]</answer>"
        )
        out = params(request, sampling)
        out.structured_outputs = StructuredOutputsParams(regex=f"<think>{think}</think>{act}")
        return out

    monkeypatch.setattr(backend, "_params", steered)
    cfg = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=160)))
    runs = {}
    for schedule in ("continuous", "rounds"):
        with metered(backend.llm, EngineMeter()) as meter:
            runs[schedule] = (
                predict(backend, questions, "agent", replace(cfg, agent=replace(cfg.agent, schedule=schedule))),
                meter,
            )
    (got, fast), (want, slow) = runs["continuous"], runs["rounds"]
    assert [p.timing["schedule"] for p in got + want] == ["continuous"] * 3 + ["rounds"] * 3
    assert [p.record for p in got] == [p.record for p in want]
    assert [(r["calls"] + r["errors"], r["end"]) for r in (p.record for p in got)] == [(2, "answer")] * 3
    assert fast.steps < slow.steps, (fast, slow)


def _tokens(n):
    from vllm import SamplingParams

    return SamplingParams(n=n, max_tokens=3, ignore_eos=True, seed=1)


def test_a_stream_leaves_no_parent_request_in_the_engine(backend):
    """A prompt sampled twice comes back as two requests, each when it ends; afterwards (and after a close that
    aborts such a prompt) vLLM's engine holds nothing of it, as after ``LLM.generate``: no request, no parent."""
    from zoomzero_plugin.engine.stream import EngineStream

    engine = backend.llm.llm_engine
    stream = EngineStream(backend.llm)
    stream.add(["a", "b"], {"prompt_token_ids": [1, 2, 3]}, _tokens(2))
    done = []
    while stream.pending:
        done += stream.step()
    assert sorted((key, len(sample.token_ids)) for key, sample, _, _ in done) == [("a", 3), ("b", 3)]
    assert engine.output_processor.parent_requests == {}
    stream.add(["c", "d"], {"prompt_token_ids": [1, 2, 3]}, _tokens(2))
    stream.close()  # a failed run: what it left is aborted
    assert not engine.has_unfinished_requests() and engine.output_processor.parent_requests == {}


def test_meters_nest_and_leave_the_engine_as_it_was(backend):
    """Two meters on one engine both count its steps (3 tokens: the prompt's step gives the first, then one a step),
    and the engine's own step is back afterwards."""
    from zoomzero_plugin.engine.stream import EngineMeter, metered

    engine = backend.llm.llm_engine
    with metered(backend.llm, EngineMeter()) as outer:
        with metered(backend.llm, EngineMeter()) as inner:
            backend.llm.generate([{"prompt_token_ids": [1, 2, 3]}], _tokens(1), use_tqdm=False)
        backend.llm.generate([{"prompt_token_ids": [1, 2, 3]}], _tokens(1), use_tqdm=False)
    assert (inner.steps, inner.running, outer.steps, outer.running) == (3, 3, 6, 6)
    assert "step" not in vars(engine)
