"""The VideoZoomer multi-turn rollout on vLLM's real CPU engine, through EasyR1's real vLLMRollout: the log-probs
EasyR1's actor computes for the assembled batch equal vLLM's log-probs of the same tokens.

Real: EasyR1's vLLMRollout (its own ``__init__`` and engine arguments; ``generate_sequences`` once per round),
FSDPWorker.generate_sequences and _process_multi_modal_inputs, RLHFDataset, DataParallelPPOActor.compute_log_prob
(transformers' Qwen2.5-VL forward in float32, ``padding_free`` off: flash-attn's unpad does not exist on CPU),
vLLM 0.11's engine (fp32, eager) with its own Qwen2.5-VL image processing and M-RoPE. Not run: FSDP and the
weight sync (the tiny model's weights are loaded into the engine where EasyR1's sharding manager loads them).
The random model is kept in the protocol with vLLM's structured outputs (set through ``meta_info``, which the
rollout copies into every round): each turn is a call with one of a few segments (a reversed one is an error
turn) or an answer; which, and where, is the model's own sampled choice.

vLLM applies the grammar's mask to the logits before it computes the log-probs it reports while sampling, so
with structured outputs those are the constrained distribution's (checked below), not the policy's. The policy's
log-probs, as vLLM computes them, come from scoring every finished trajectory again (``prompt_logprobs``: its
raw ids and frames, vLLM's own image processing and M-RoPE): EasyR1's actor must reproduce those. Without
structured outputs (training) the sampling log-probs are the policy's; the transformers stand-in test
(tests/easyr1/test_agent_rollout.py) checks sampling-time log-probs directly.
"""

from __future__ import annotations

import importlib.util
import json
from types import SimpleNamespace

import pytest
import torch

_spec = importlib.util.find_spec("vllm")
if _spec is None or _spec.origin is None or "shims" in _spec.origin:
    pytest.skip("vLLM is not installed here: run in .venv-vllm (bash scripts/install-cpu.sh --vllm)",
                allow_module_level=True)

TURN = (r'<think>[a-z]{1,5}</think>(<video_zoom>\{"segment": \[(1|5), (3|9)\], "fps": (1|2)\}</video_zoom>'
        r"|<answer>[A-C]</answer>)")
CALLS = r'<think>[a-z]{1,30}</think><video_zoom>\{"segment": \[(1|5), (3|9)\], "fps": (1|2)\}</video_zoom>'
TOLERANCE = 1e-5  # float32 on both sides; measured here: 9.5e-7 over 950 tokens

# The stand-in test's recipe (tests/easyr1/test_agent_rollout.py), as vLLM's CPU engine needs it: eager fp32, room for
# every prompt x n in one batch (vLLM 0.11's CPU engine fails seeded sampling in chunked prefill), shorter turns.
OVERRIDES = ["worker.rollout.enforce_eager=true", "worker.rollout.dtype=fp32", "worker.rollout.limit_images=64",
             "worker.rollout.max_num_batched_tokens=16384", "data.max_response_length=1536",
             "worker.reward.reward_function_kwargs.agent.max_new_tokens=64",
             "worker.reward.reward_function_kwargs.agent.max_response_tokens=1536",
             "worker.reward.reward_function_kwargs.agent.max_images=64"]


@pytest.fixture(scope="module")
def setup(process_group, vllm_model_dir, vllm_hf_model, tmp_path_factory):
    from verl.utils.tokenizer import get_processor, get_tokenizer
    from verl.workers.rollout.vllm_rollout_spmd import vLLMRollout

    from tests.easyr1.test_agent_rollout import RECIPE
    from tests.vllm.test_easyr1_rollout import load_actor_weights
    from zoomzero_plugin.agent import question_text
    from zoomzero_plugin.ground_truth import GroundTruth
    from zoomzero_plugin.hosts.easyr1.activation import activate
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe
    from zoomzero_plugin.synthetic.videos import Evidence, write_video

    activate("pytest")
    root = tmp_path_factory.mktemp("agent-vllm")
    rows = []
    for i, (question, options, letter) in enumerate([("What colour is the square?", ("red", "green", "blue"), "A"),
                                                      ("Which colour appears?", ("yellow", "red", "cyan"), "B")]):
        video = write_video(root / f"v{i}.mp4", duration=12.0, fps=4, width=112, height=84,
                            evidence=[Evidence(5.0, 8.0, options[ord(letter) - 65])])
        truth = GroundTruth(letter, options, ((5.0, 8.0),), 12.0, f"q{i}", question)
        rows.append({"prompt": question_text(question, options), "videos": [str(video)], "answer": truth.to_json()})
    path = root / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = root / "videozoomer_vllm.yaml"
    recipe.write_text(RECIPE.format(rows=path, model=vllm_model_dir))
    config = load_recipe(recipe, OVERRIDES)[0]
    tokenizer, processor = get_tokenizer(str(vllm_model_dir)), get_processor(str(vllm_model_dir))
    rollout = vLLMRollout(str(vllm_model_dir), config.worker.rollout, tokenizer, processor)
    load_actor_weights(rollout, vllm_hf_model)
    return SimpleNamespace(config=config, tokenizer=tokenizer, processor=processor, rollout=rollout,
                           model=vllm_hf_model)


class _Identity:
    def preprocess_data(self, data):
        return data

    def postprocess_data(self, data):
        return data


def generate(setup, schedule="rounds", temperature=None, turn=TURN):
    """One training generation: EasyR1's dataset rows -> FSDPWorker.generate_sequences -> the agent rollout, with
    the agent's turns scheduled as ``schedule`` says; the engine calls (``LLM.generate``) and steps counted."""
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.protocol import DataProto
    from verl.utils.dataset import collate_fn
    from verl.workers.fsdp_workers import FSDPWorker
    from vllm.sampling_params import StructuredOutputsParams

    from tests.easyr1.helpers import rlhf_dataset
    from zoomzero_plugin.hosts.easyr1.generation import ROLLOUT_KEY, mark_row_fields
    from zoomzero_plugin.hosts.easyr1.zoomzero.agent_rollout import ROLLOUT, select
    from zoomzero_plugin.inference.engine_stream import EngineMeter, metered

    config = setup.config
    loader = StatefulDataLoader(rlhf_dataset(config, setup.tokenizer, setup.processor), batch_size=2,
                                collate_fn=collate_fn)
    mark_row_fields([loader], ROLLOUT.row_fields)
    meta = {"min_pixels": 3136, "max_pixels": 12544, "video_fps": 0.5}
    batch = DataProto.from_single_dict(next(iter(loader)), meta_info=meta)
    gen = batch.pop(batch_keys=["input_ids", "attention_mask", "position_ids"],
                    non_tensor_batch_keys=["raw_prompt_ids", "multi_modal_data"], meta_info_keys=list(meta))
    gen.meta_info[ROLLOUT_KEY] = {"name": ROLLOUT.name, "options": {**select(config), "schedule": schedule}}
    gen.meta_info["structured_outputs"] = StructuredOutputsParams(regex=turn)
    if temperature is not None:
        gen.meta_info["temperature"] = temperature
    if temperature == 0:
        gen.meta_info["n"] = 1  # vLLM samples greedily only once per prompt (EasyR1's validation: n 1)
    engine = setup.rollout.inference_engine
    calls, generate = [], engine.generate

    def count(*args, **kwargs):
        calls.append(len(kwargs.get("prompts") or args[0]))
        return generate(*args, **kwargs)

    engine.generate = count
    worker = SimpleNamespace(_has_rollout=True, generation_config=None, tokenizer=setup.tokenizer,
                             processor=setup.processor, rollout=setup.rollout, rollout_sharding_manager=_Identity())
    try:
        with metered(engine, EngineMeter()) as meter:
            out = FSDPWorker.generate_sequences(worker, gen)
    finally:
        engine.generate = generate
    return SimpleNamespace(batch=out, calls=calls, meter=meter)


@pytest.fixture(scope="module")
def generated(setup):
    return generate(setup)


def test_the_rollout_runs_rounds_on_vllm(generated, setup):
    batch, stats = generated.batch, list(generated.batch.non_tensor_batch["agent_stats"])
    assert len(batch) == 8 and generated.calls[0] == 2, "round 0: the two prompts, n=4 samples each"
    assert all(k <= 8 for k in generated.calls[1:]) and len(generated.calls) == max(s["turns"] for s in stats)
    assert sum(s["calls"] for s in stats) >= 1, f"no trajectory looked at a clip: {stats}"
    image = setup.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    mask = batch.batch["response_mask"]
    for i, s in enumerate(stats):
        assert int((batch.batch["responses"][i][mask[i] == 0] == image).sum()) == s["clip_frames"] * 12
        assert s["end"] in ("answer", "last_round_call", "no_answer", "total_tokens")


def actor_log_probs(batch, setup):
    from verl.workers.actor.config import ActorConfig
    from verl.workers.actor.dp_actor import DataParallelPPOActor
    from verl.workers.fsdp_workers import FSDPWorker

    data = batch.select(batch_keys=["input_ids", "attention_mask", "position_ids", "responses"],
                        non_tensor_batch_keys=["multi_modal_data", "media_uid"], deepcopy=False)
    data.meta_info = {**batch.meta_info, "temperature": 1.0}
    FSDPWorker._process_multi_modal_inputs(SimpleNamespace(_cache={}, processor=setup.processor), data)
    config = ActorConfig(padding_free=False, dynamic_batching=False, use_torch_compile=False,
                         micro_batch_size_per_device_for_experience=4)
    return DataParallelPPOActor(config, setup.model).compute_log_prob(data)


def vllm_scores(batch, setup):
    """vLLM's log-prob of every response token of each trajectory (``prompt_logprobs``), (bs, response) like
    the actor's: the trajectory's raw ids (one placeholder per image) and frames, scored by the same engine.
    vLLM expands the placeholders itself: its prompt must equal the assembled sequence token for token."""
    from verl.utils.dataset import process_image
    from vllm import SamplingParams

    image = setup.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    width = batch.batch["responses"].size(-1)
    out = torch.zeros_like(batch.batch["responses"], dtype=torch.float32)
    requests, sequences = [], []
    for i in range(len(batch)):
        ids = batch.batch["input_ids"][i][batch.batch["attention_mask"][i].bool()]
        first = ids == image
        first[1:] &= ids[:-1] != image  # one raw placeholder per image: the first token of each run
        images = [process_image(ref, None, None) for ref in batch.non_tensor_batch["multi_modal_data"][i]["images"]]
        requests.append(
            {"prompt_token_ids": ids[(ids != image) | first].tolist(), "multi_modal_data": {"image": images}}
        )
        sequences.append(ids.tolist())
    params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
    results = setup.rollout.inference_engine.generate(prompts=requests, sampling_params=params, use_tqdm=False)
    for i, (result, ids) in enumerate(zip(results, sequences)):
        assert list(result.prompt_token_ids) == ids, f"sample {i}: vLLM expanded the images to another sequence"
        n = int(batch.batch["attention_mask"][i, -width:].sum())
        for j in range(n):  # response token j is real token len(ids) - n + j
            k = len(ids) - n + j
            out[i, j] = result.prompt_logprobs[k][ids[k]].logprob
    return out


def test_actor_log_probs_equal_vllms(generated, setup):
    batch = generated.batch
    log_probs = actor_log_probs(batch, setup)
    scored = vllm_scores(batch, setup)
    sampled = batch.batch["response_mask"].bool()
    diff = (log_probs - scored)[sampled].abs()
    print(f"\nactor vs vLLM over {int(sampled.sum())} sampled tokens: max {diff.max():.2e}, mean {diff.mean():.2e}")
    assert diff.max() < TOLERANCE, f"max |actor - vLLM| = {diff.max():.2e} (mean {diff.mean():.2e})"
    # what vLLM reported while sampling under the grammar: the constrained distribution (a forced token: 0)
    reported = batch.batch["rollout_log_probs"][sampled]
    assert (reported <= 0).all() and (reported > scored[sampled] + 1.0).float().mean() > 0.5


@pytest.mark.parametrize("temperature", [0.0, 1.0], ids=["greedy", "sampled"])
def test_continuous_batching_hands_easyr1_the_round_by_round_batch(setup, temperature):
    """No round barrier, the same batch: every turn of every trajectory the same tokens (greedy; and sampled, each
    request seeded as in one engine call), the same observations, masks, positions and media. Greedy, the random
    model would answer at once: its turns are calls (a reversed segment is an error turn) until the last turn."""
    turn = CALLS if temperature == 0 else TURN
    rounds = generate(setup, "rounds", temperature, turn)
    continuous = generate(setup, "continuous", temperature, turn)
    a, b = rounds.batch, continuous.batch
    assert rounds.calls and not continuous.calls, "continuous: no LLM.generate, the engine stepped request by request"
    turns = [s["turns"] for s in a.non_tensor_batch["agent_stats"]]
    assert len(rounds.calls) == max(turns) > 1 and continuous.meter.steps <= rounds.meter.steps
    assert list(a.non_tensor_batch["agent_stats"]) == list(b.non_tensor_batch["agent_stats"])
    for key in ("input_ids", "attention_mask", "position_ids", "responses", "response_mask"):
        assert torch.equal(a.batch[key], b.batch[key]), key
    assert torch.allclose(a.batch["rollout_log_probs"], b.batch["rollout_log_probs"], atol=1e-5)
    same_media = [u.split("-")[1] for u in a.non_tensor_batch["media_uid"]]  # "<batch>-<hash of the media>"
    assert same_media == [u.split("-")[1] for u in b.non_tensor_batch["media_uid"]]
    assert [m["images"] for m in a.non_tensor_batch["multi_modal_data"]] == \
        [m["images"] for m in b.non_tensor_batch["multi_modal_data"]]
    print(f"\n{temperature=}: turns {turns}; engine steps rounds {rounds.meter.steps}, continuous "
          f"{continuous.meter.steps}; mean batch {rounds.meter.mean_batch:.1f} vs {continuous.meter.mean_batch:.1f}")
