"""The VideoZoomer multi-turn rollout on vLLM's real CPU engine, through EasyR1's real vLLMRollout: the log-probs
EasyR1's actor computes for the assembled batch equal vLLM's log-probs of the same tokens — on Qwen2.5-VL and
Qwen3-VL, with clips shown as images and as videos (``agent.clip_as``).

Real: EasyR1's vLLMRollout (its own ``__init__`` and engine arguments; ``generate_sequences`` once per round),
FSDPWorker.generate_sequences and _process_multi_modal_inputs, DataParallelPPOActor.compute_log_prob
(transformers' Qwen2.5-VL / Qwen3-VL forward in float32, ``padding_free`` off: flash-attn's unpad does not exist on
CPU), vLLM 0.11's engine (fp32, eager) with its own Qwen-VL image and video processing and M-RoPE (Qwen2.5-VL: a
clip's time-aligned positions at its own rate, in float; Qwen3-VL: its timestamp tokens). The rows are handed to
generate_sequences as EasyR1's trainer hands them (EasyR1 v0.3.2's RLHFDataset cannot read Qwen3-VL video rows).
Not run: FSDP and the
weight sync (the tiny model's weights are loaded into the engine where EasyR1's sharding manager loads them).
The random model is kept in the protocol with vLLM's structured outputs (set through ``meta_info``, which the
rollout copies into every round): each turn is a call with one of a few segments (1 to 16 frames; a clip of one
frame is padded to a temporal patch when shown as a video) or an answer; which, and where, is the model's own sampled
choice.

vLLM applies the grammar's mask to the logits before it computes the log-probs it reports while sampling, so
with structured outputs those are the constrained distribution's (checked below), not the policy's. The policy's
log-probs, as vLLM computes them, come from scoring every finished trajectory again (``prompt_logprobs``: its
raw ids and frames, vLLM's own image processing and M-RoPE): EasyR1's actor must reproduce those. Without
structured outputs (training) the sampling log-probs are the policy's; the transformers stand-in test
(tests/easyr1/test_agent_rollout.py) checks sampling-time log-probs directly.
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.vllm.conftest import release_engine

_spec = importlib.util.find_spec("vllm")
if _spec is None or _spec.origin is None or "shims" in _spec.origin:
    pytest.skip(
        "vLLM is not installed here: run in .venv-vllm (bash scripts/install-cpu.sh --vllm)", allow_module_level=True
    )

TURN = (
    r'<think>[a-z]{1,5}</think>(<video_zoom>\{"segment": \[(1|5), (6|9)\], "fps": (1|2)\}</video_zoom>'
    r"|<answer>[A-C]</answer>)"
)
CALLS = r'<think>[a-z]{1,30}</think><video_zoom>\{"segment": \[(1|5), (6|9)\], "fps": (1|2)\}</video_zoom>'
TOLERANCE = 1e-5  # float32 on both sides; measured here: 9.5e-7 over 950 tokens

# The stand-in test's recipe (tests/easyr1/test_agent_rollout.py), as vLLM's CPU engine needs it: eager fp32, room for
# every prompt x n in one batch (vLLM 0.11's CPU engine fails seeded sampling in chunked prefill), shorter turns.
OVERRIDES = [
    "worker.rollout.enforce_eager=true",
    "worker.rollout.dtype=fp32",
    "worker.rollout.limit_images=64",
    "worker.rollout.max_num_batched_tokens=16384",
    "data.max_response_length=1536",
    "worker.reward.reward_function_kwargs.agent.max_new_tokens=64",
    "worker.reward.reward_function_kwargs.agent.max_response_tokens=1536",
    "worker.reward.reward_function_kwargs.agent.max_images=64",
]


FAMILIES = {"qwen2_5_vl": "vllm_model_dir", "qwen3_vl": "tiny_qwen3_dir"}  # the tiny models vLLM's CPU engine serves


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    from tests.easyr1.helpers import evidence_rows

    return evidence_rows(
        tmp_path_factory.mktemp("agent-vllm"),
        [
            ("What colour is the square?", ("red", "green", "blue"), "A"),
            ("Which colour appears?", ("yellow", "red", "cyan"), "B"),
        ],
        12.0,
    )


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def setup(request, process_group, rows, tmp_path_factory):
    """EasyR1's vLLMRollout over one tiny model (Qwen2.5-VL, Qwen3-VL), the actor's weights loaded into it."""
    from transformers import AutoModelForImageTextToText
    from verl.utils.tokenizer import get_processor, get_tokenizer
    from verl.workers.rollout.vllm_rollout_spmd import vLLMRollout

    from tests.easyr1.test_agent_rollout import RECIPE
    from tests.vllm.test_easyr1_rollout import load_actor_weights
    from zoomzero_plugin.hosts.easyr1.activation import activate
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    activate("pytest")
    model_dir = request.getfixturevalue(FAMILIES[request.param])
    model = AutoModelForImageTextToText.from_pretrained(model_dir).eval()
    recipe = tmp_path_factory.mktemp("recipe") / "videozoomer_vllm.yaml"
    recipe.write_text(RECIPE.format(rows=rows[0], model=model_dir))
    config = load_recipe(recipe, OVERRIDES)[0]
    tokenizer, processor = get_tokenizer(str(model_dir)), get_processor(str(model_dir))
    rollout = vLLMRollout(str(model_dir), config.worker.rollout, tokenizer, processor)
    load_actor_weights(rollout, model)
    yield SimpleNamespace(
        config=config, tokenizer=tokenizer, processor=processor, rollout=rollout, model=model, family=request.param
    )
    release_engine(rollout)


class _Identity:
    def preprocess_data(self, data):
        return data

    def postprocess_data(self, data):
        return data


def gen_batch(setup, rows, clip_as, schedule="rounds"):
    """The two rows as EasyR1's trainer hands them to generate_sequences (raw prompt ids, media with the row
    fields; built by hand: EasyR1 v0.3.2's RLHFDataset cannot read Qwen3-VL video rows), routed to the agent with
    its turns scheduled as ``schedule`` says (rounds: one ``LLM.generate`` per round, counted below)."""
    from verl.protocol import DataProto
    from vllm.sampling_params import StructuredOutputsParams

    from zoomzero_plugin.hosts.easyr1.generation import ROLLOUT_KEY, ROW_FIELDS_KEY
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import ROLLOUT, select

    k = len(rows)
    raw, media = np.empty(k, dtype=object), np.empty(k, dtype=object)
    raw[:] = [setup.tokenizer.encode(r["prompt"], add_special_tokens=False) for r in rows]
    media[:] = [{"videos": r["videos"], ROW_FIELDS_KEY: {"ground_truth": r["answer"]}} for r in rows]
    shape = torch.zeros((k, 1), dtype=torch.long)
    options = select(setup.config)
    meta = {
        "min_pixels": 3136,
        "max_pixels": 12544,
        "video_fps": 0.5,
        "n": 4,
        ROLLOUT_KEY: {"name": ROLLOUT.name, "options": {**options, "clip_as": clip_as, "schedule": schedule}},
        "structured_outputs": StructuredOutputsParams(regex=TURN),
    }
    return DataProto.from_dict(
        tensors={"input_ids": shape, "attention_mask": torch.ones_like(shape), "position_ids": shape.clone()},
        non_tensors={"raw_prompt_ids": raw, "multi_modal_data": media},
        meta_info=meta,
    )


@pytest.fixture(scope="module", params=["images", "video"])
def generated(request, setup, rows, monkeypatch_module):
    """One training generation (FSDPWorker.generate_sequences -> the agent rollout), clips as images or videos; the
    conversations the rollout assembled are kept (their raw ids: what vLLM read)."""
    from zoomzero_plugin.hosts.easyr1.zoomzero import agent_rollout

    conversations, assemble = [], agent_rollout.assemble

    def keep(convs, *args, **kwargs):
        conversations[:] = list(convs)
        return assemble(convs, *args, **kwargs)

    monkeypatch_module.setattr(agent_rollout, "assemble", keep)
    try:
        run = generate_counted(setup, gen_batch(setup, rows[1], request.param))
    finally:
        monkeypatch_module.setattr(agent_rollout, "assemble", assemble)
    return SimpleNamespace(batch=run.batch, calls=run.calls, conversations=conversations, clip_as=request.param)


@pytest.fixture(scope="module")
def monkeypatch_module():
    patch = pytest.MonkeyPatch()
    yield patch
    patch.undo()


def test_the_rollout_runs_rounds_on_vllm(generated, setup):
    batch, stats = generated.batch, list(generated.batch.non_tensor_batch["agent_stats"])
    assert len(batch) == 8 and generated.calls[0] == 2, "round 0: the two prompts, n=4 samples each"
    assert all(k <= 8 for k in generated.calls[1:]) and len(generated.calls) == max(s["turns"] for s in stats)
    assert sum(s["calls"] for s in stats) >= 1, f"no trajectory looked at a clip: {stats}"
    image = setup.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    video = setup.tokenizer.convert_tokens_to_ids("<|video_pad|>")
    mask = batch.batch["response_mask"]
    for i, s in enumerate(stats):
        observed = batch.batch["responses"][i][mask[i] == 0]
        if generated.clip_as == "images":  # each 112x84 frame: a 3x4 merged grid (28- and 32-px tokens alike)
            assert int((observed == image).sum()) == s["clip_frames"] * 12
        else:  # each clip one video: its frames padded to temporal patches of 2, each patch 3x4
            refs = batch.non_tensor_batch["multi_modal_data"][i].get("videos", [])
            assert len(refs) == s["calls"] and int((observed == image).sum()) == 0
            assert int((observed == video).sum()) == sum(len(r["frames"]) // 2 for r in refs) * 12
        assert s["end"] in ("answer", "last_round_call", "no_answer", "total_tokens")


def actor_log_probs(batch, setup):
    from verl.workers.actor.config import ActorConfig
    from verl.workers.actor.dp_actor import DataParallelPPOActor
    from verl.workers.fsdp_workers import FSDPWorker

    data = batch.select(
        batch_keys=["input_ids", "attention_mask", "position_ids", "responses"],
        non_tensor_batch_keys=["multi_modal_data", "media_uid"],
        deepcopy=False,
    )
    data.meta_info = {**batch.meta_info, "temperature": 1.0}
    FSDPWorker._process_multi_modal_inputs(SimpleNamespace(_cache={}, processor=setup.processor), data)
    config = ActorConfig(
        padding_free=False,
        dynamic_batching=False,
        use_torch_compile=False,
        micro_batch_size_per_device_for_experience=4,
    )
    return DataParallelPPOActor(config, setup.model).compute_log_prob(data)


def vllm_scores(generated, setup):
    """vLLM's log-prob of every response token of each trajectory (``prompt_logprobs``), (bs, response) like
    the actor's: the trajectory's raw ids (what vLLM read: one placeholder per image and per video) and its media,
    scored by the same engine (whose wrapped LLM passes each video's rate). vLLM expands the placeholders itself: its
    prompt must equal the assembled sequence token for token (Qwen3-VL: the timestamps of each clip too)."""
    from verl.utils.dataset import process_image, process_video
    from vllm import SamplingParams

    batch = generated.batch
    width = batch.batch["responses"].size(-1)
    out = torch.zeros_like(batch.batch["responses"], dtype=torch.float32)
    requests, sequences = [], []
    for i, conversation in enumerate(generated.conversations):
        ids = batch.batch["input_ids"][i][batch.batch["attention_mask"][i].bool()]
        media = {"image": [process_image(ref, None, None) for ref in conversation.images()]}
        if conversation.videos():
            media["video"] = [process_video(ref, None, None, 0.5) for ref in conversation.videos()]
        requests.append({"prompt_token_ids": list(conversation.raw_ids()), "multi_modal_data": media})
        sequences.append(ids.tolist())
    params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
    results = setup.rollout.inference_engine.generate(prompts=requests, sampling_params=params, use_tqdm=False)
    for i, (result, ids) in enumerate(zip(results, sequences)):
        assert list(result.prompt_token_ids) == ids, f"sample {i}: vLLM expanded the media to another sequence"
        n = int(batch.batch["attention_mask"][i, -width:].sum())
        for j in range(n):  # response token j is real token len(ids) - n + j
            k = len(ids) - n + j
            out[i, j] = result.prompt_logprobs[k][ids[k]].logprob
    return out


def test_actor_log_probs_equal_vllms(generated, setup):
    batch = generated.batch
    log_probs = actor_log_probs(batch, setup)
    scored = vllm_scores(generated, setup)
    sampled = batch.batch["response_mask"].bool()
    diff = (log_probs - scored)[sampled].abs()
    print(f"\nactor vs vLLM over {int(sampled.sum())} sampled tokens: max {diff.max():.2e}, mean {diff.mean():.2e}")
    assert diff.max() < TOLERANCE, f"max |actor - vLLM| = {diff.max():.2e} (mean {diff.mean():.2e})"
    # what vLLM reported while sampling under the grammar: the constrained distribution (a forced token: 0)
    reported = batch.batch["rollout_log_probs"][sampled]
    assert (reported <= 0).all() and (reported > scored[sampled] + 1.0).float().mean() > 0.5


def generate_counted(setup, batch):
    """FSDPWorker.generate_sequences on ``batch``, its ``LLM.generate`` calls and engine steps counted."""
    from verl.workers.fsdp_workers import FSDPWorker

    from zoomzero_plugin.engine.stream import EngineMeter, metered

    engine = setup.rollout.inference_engine
    calls, generate = [], engine.generate

    def count(*args, **kwargs):
        calls.append(len(kwargs.get("prompts") or args[0]))
        return generate(*args, **kwargs)

    engine.generate = count
    worker = SimpleNamespace(
        _has_rollout=True,
        generation_config=None,
        tokenizer=setup.tokenizer,
        processor=setup.processor,
        rollout=setup.rollout,
        rollout_sharding_manager=_Identity(),
    )
    try:
        with metered(engine, EngineMeter()) as meter:
            out = FSDPWorker.generate_sequences(worker, batch)
    finally:
        engine.generate = generate
    return SimpleNamespace(batch=out, calls=calls, meter=meter)


@pytest.mark.parametrize("temperature", [0.0, 1.0], ids=["greedy", "sampled"])
def test_continuous_batching_hands_easyr1_the_round_by_round_batch(setup, rows, temperature):
    """No round barrier, the same batch: every turn of every trajectory the same tokens (greedy; and sampled, each
    request seeded as in one engine call), the same observations, masks, positions and media. Greedy, the random
    model would answer at once: its turns are calls until the last turn."""
    from vllm.sampling_params import StructuredOutputsParams

    def batch(schedule):
        gen = gen_batch(setup, rows[1], "images", schedule)
        gen.meta_info.update(
            temperature=temperature,
            structured_outputs=StructuredOutputsParams(regex=CALLS if temperature == 0 else TURN),
        )
        if temperature == 0:
            gen.meta_info["n"] = 1  # vLLM samples greedily only once per prompt (EasyR1's validation: n 1)
        return gen

    rounds, continuous = generate_counted(setup, batch("rounds")), generate_counted(setup, batch("continuous"))
    a, b = rounds.batch, continuous.batch
    assert rounds.calls and not continuous.calls, "continuous: no LLM.generate, the engine stepped request by request"
    turns = [s["turns"] for s in a.non_tensor_batch["agent_stats"]]
    assert len(rounds.calls) == max(turns) > 1
    assert list(a.non_tensor_batch["agent_stats"]) == list(b.non_tensor_batch["agent_stats"])
    for key in ("input_ids", "attention_mask", "position_ids", "responses", "response_mask"):
        assert torch.equal(a.batch[key], b.batch[key]), key
    assert torch.allclose(a.batch["rollout_log_probs"], b.batch["rollout_log_probs"], atol=1e-5)
    same_media = [u.split("-")[1] for u in a.non_tensor_batch["media_uid"]]  # "<batch>-<hash of the media>"
    assert same_media == [u.split("-")[1] for u in b.non_tensor_batch["media_uid"]]
    assert [m["images"] for m in a.non_tensor_batch["multi_modal_data"]] == [
        m["images"] for m in b.non_tensor_batch["multi_modal_data"]
    ]
    print(
        f"\n{temperature=}: turns {turns}; engine steps rounds {rounds.meter.steps}, continuous "
        f"{continuous.meter.steps}; mean batch {rounds.meter.mean_batch:.1f} vs {continuous.meter.mean_batch:.1f}"
    )
