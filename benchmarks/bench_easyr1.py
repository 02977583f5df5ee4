"""EasyR1 host speed: tokenadv vs EasyR1's own grpo in the same run, the zoom hook's driver-side work, and the
VideoZoomer multi-turn rollout's bookkeeping and memory.

    python benchmarks/bench_easyr1.py [--responses 512] [--tokens 512] [--group 8] [--repeats 20]
    .venv-vllm/bin/python benchmarks/bench_easyr1.py --vllm    # plus a rollout step on vLLM's CPU engine
    .venv-vllm/bin/python benchmarks/bench_easyr1.py --only rollout   # only that step
    python benchmarks/bench_easyr1.py --only multiturn [--mt-prompts 128] [--mt-n 16] [--mt-memory-prompts 16]

``--vllm`` (where vLLM is installed: scripts/install-cpu.sh --vllm) adds a rollout step on EasyR1's own
vLLMRollout (CPU engine, tiny head-32 model): coarse generation of 4 prompts × a group of 8 over 60-s synthetic
videos, with and without the zoom hook's pass, same engine and batch (goal ≤ 1.10×; the paper reports 1.15× per
training step, where the actor update also counts), and how many zoom requests the group's repeated span sets
need. Each step starts with an empty video store (every step brings new videos); the table shows, for the median
step with the zoom pass, the coarse generation and the zoom pass apart, and the store's work in each (decode seconds,
video opens, batched decodes, frames decoded, frames served from memory). The random model is steered into the
template by vLLM's structured outputs (a regex whose think text is 150 free characters and whose spans come from a
small set, so samples of a group repeat them).

Both estimators go through EasyR1's (patched) ``ray_trainer.compute_advantage`` on the same ``DataProto``.
The zoom bookkeeping is everything the hook does in the trainer process per step except the zoom
generation itself: decode every response and parse its glue spans, plan Eq. 3, build the zoom batch (cold
prompt cache: every step brings new questions), read and score the zoom answers, statistics. Scoring all
reward components happens in EasyR1's reward actor (as without the plugin); its time is shown apart.
Goals: tokenadv ≤ 1.0x grpo; bookkeeping ≤ 50 ms median for 512 responses. Uses the tiny offline
tokenizer/processor: its small vocabulary makes ~2x more tokens per response than Qwen's tokenizer.

Multi-turn (``--only multiturn``): one training step of the VideoZoomer rollout, ``--mt-prompts`` x ``--mt-n``
trajectories of 4 rounds (3 calls of 16 frames, then an answer) on 130-s synthetic videos (64-frame overview of 448x224
frames: 128 tokens each, as the released checkpoint sees them), at yamls/videozoomer.yaml's widths (10,240 + 32,768). A
stand-in engine returns the scripted turns at once, so what is timed is the rollout's own work: decode and parse every
turn, step the environments, plan the clips, render and tokenise the observations, build each round's inputs, then
assemble ids, masks, M-RoPE positions and media for EasyR1 — on one core, for the whole step (a real run splits it over
the rollout workers). Overview frames are decoded before timing (that is the engine's media work, as is vLLM's). Goal:
<= 1 s per step. For scale, the time EasyR1's own vLLMRollout takes to build the single-turn batch of responses as long
(Python lists padded to the response width). Memory: the peak RSS growth, in a fresh process each, of the rollout's
assembled batch vs the single-turn batch EasyR1's own vLLMRollout.generate_sequences builds for as many responses of the
same lengths at the same widths, for ``--mt-memory-prompts`` x ``--mt-n`` trajectories (one worker's share of a 128 x 16
step on 8 GPUs by default).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_ms, print_table  # noqa: E402

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402
from zoomzero_plugin.ground_truth import GroundTruth  # noqa: E402


def import_easyr1_trainer():
    """EasyR1's trainer module, with the plugins active. Without vLLM (CPU), the package's stand-in serves its
    import."""
    from zoomzero_plugin.hosts.easyr1 import activate, vllm_stub

    if vllm_stub.install():
        print("note: vLLM not installed; EasyR1's trainer imported with the vLLM stand-in (nothing is generated)")
    ensure_torchvision_importable()

    activate("benchmark")
    from verl.trainer import ray_trainer

    return ray_trainer


def response_text(rng: random.Random, truth: GroundTruth) -> str:
    pairs = sorted(
        (round(s, 1), round(min(s + rng.uniform(1, 20), truth.duration), 1))
        for s in (rng.uniform(0, truth.duration - 1) for _ in range(rng.randint(0, 3)))
    )
    think = " ".join(
        f"At <time>({s}, {e})</time> the person lifts the cup while the camera pans left." for s, e in pairs
    )
    glue = f"<glue>[{', '.join(f'({s}, {e})' for s, e in pairs)}]</glue>" if pairs or rng.random() < 0.5 else ""
    return f"<think>{think or 'Nothing is clear.'}</think><answer>{rng.choice('ABCD')}</answer>{glue}"


def make_batch(tokenizer, n: int, length: int, group: int, seed: int = 0):
    """A training batch after generation: n responses (padded to ``length``), ``group`` per prompt."""
    from verl.protocol import DataProto

    rng = random.Random(seed)
    truths = [
        GroundTruth(
            answer=rng.choice("ABCD"),
            options=("red", "green", "blue", "yellow"),
            spans=((10.0, 25.0),),
            duration=rng.uniform(60, 600),
            qid=f"q{i}",
            question=f"What happens at moment {i}?",
        )
        for i in range(n // group)
    ]
    texts = [response_text(rng, truths[i // group]) for i in range(n)]
    ids = [tokenizer.encode(t, add_special_tokens=False)[: length - 1] + [tokenizer.eos_token_id] for t in texts]
    responses = torch.full((n, length), tokenizer.pad_token_id)
    mask = torch.zeros((n, length), dtype=torch.long)
    for i, x in enumerate(ids):
        responses[i, : len(x)], mask[i, : len(x)] = torch.tensor(x), 1
    video_pad = tokenizer.convert_tokens_to_ids("<|video_pad|>")
    prompts = torch.full((n, 64), tokenizer.pad_token_id)
    prompts[:, :40] = video_pad
    non_tensors = {
        "uid": np.array([f"uid-{i // group}" for i in range(n)], dtype=object),
        "ground_truth": np.array([truths[i // group].to_json() for i in range(n)], dtype=object),
        "multi_modal_data": np.array([{"videos": [f"/data/videos/{i // group}.mp4"]} for i in range(n)], dtype=object),
    }
    return DataProto.from_dict(
        tensors={"responses": responses, "response_mask": mask, "prompts": prompts}, non_tensors=non_tensors
    )


def advantage_rows(ray_trainer, tokenizer, n, length, group, repeats):
    from zoomzero_plugin.hosts.easyr1.batch_step import COMPONENT_PREFIX
    from zoomzero_plugin.hosts.easyr1.zoomzero.tokenadv import GLUE_MASK, NAME, _masker

    data = make_batch(tokenizer, n, length, group)
    rng = np.random.default_rng(0)
    for name in ("format", "accuracy", "zoom"):
        data.batch[COMPONENT_PREFIX + name] = torch.tensor(rng.integers(0, 2, n), dtype=torch.float32)
    data.batch[COMPONENT_PREFIX + "iou"] = torch.tensor(rng.random(n), dtype=torch.float32)
    lengths = data.batch["response_mask"].sum(-1)
    scores = torch.zeros(n, length)
    scores[torch.arange(n), lengths - 1] = torch.tensor(rng.random(n), dtype=torch.float32)
    data.batch["token_level_rewards"] = scores
    masker = _masker(tokenizer)
    data.batch[GLUE_MASK] = masker(data.batch["responses"], data.batch["response_mask"])
    data.meta_info[NAME] = {"eps": 1e-6}

    grpo = median_ms(lambda: ray_trainer.compute_advantage(data, adv_estimator="grpo"), repeats)
    tokenadv = median_ms(lambda: ray_trainer.compute_advantage(data, adv_estimator="tokenadv"), repeats)
    fresh = median_ms(
        lambda: type(masker)(tokenizer)(data.batch["responses"], data.batch["response_mask"]), max(3, repeats // 4), 1
    )
    warm = median_ms(lambda: masker(data.batch["responses"], data.batch["response_mask"]), repeats)
    return [
        (f"EasyR1 grpo, compute_advantage ({n}x{length})", f"{grpo:8.2f} ms"),
        (f"tokenadv, compute_advantage ({n}x{length})", f"{tokenadv:8.2f} ms"),
        ("tokenadv / grpo (goal <= 1.0x)", f"{tokenadv / grpo:8.2f} x"),
        ("tokenadv prepare: glue masks, warm token cache", f"{warm:8.2f} ms"),
        ("tokenadv prepare: glue masks, first step", f"{fresh:8.2f} ms"),
    ]


def zoom_rows(tokenizer, processor, n, length, group, repeats):
    from verl.protocol import DataProto

    from zoomzero_plugin.gvqa.gvqa_reward import compute_score
    from zoomzero_plugin.hosts.easyr1.zoomzero.zoom_hook import ZoomHook
    from zoomzero_plugin.hosts.options import ZoomOptions

    batches = [make_batch(tokenizer, n, length, group, seed=s) for s in range(repeats + 3)]
    options = ZoomOptions.from_section({})
    kwargs = {"components": ["format", "iou", "accuracy", "zoom"], "zoom": {"enable": True}}
    answer = tokenizer.encode("B", add_special_tokens=False) + [tokenizer.eos_token_id]
    phases = {"decode + parse glue + plan": [], "build zoom batch": [], "read answers + stats": []}
    scoring = []
    import time

    def step(batch):
        hook = ZoomHook(options, tokenizer, processor, coarse_fps=1.0)  # cold prompt cache: new questions
        t0 = time.perf_counter()
        texts = hook.decode(batch.batch["responses"], batch.batch["response_mask"])
        requests = hook.plan(texts, batch.non_tensor_batch["ground_truth"], batch.non_tensor_batch["multi_modal_data"])
        t1 = time.perf_counter()
        zoom = hook.zoom_batch(requests)
        t2 = time.perf_counter()
        k = len(zoom)
        output = DataProto.from_dict(
            tensors={
                "responses": torch.tensor([answer] * k),
                "response_mask": torch.ones(k, len(answer), dtype=torch.long),
            }
        )
        answers = hook.answers(requests, output, len(batch))
        hook.stats(requests, answers, batch.batch["prompts"])
        t3 = time.perf_counter()
        inputs = [
            {"response": t, "response_length": 0, "ground_truth": g, "zoom_answer": a}
            for t, g, a in zip(texts, batch.non_tensor_batch["ground_truth"], answers)
        ]
        compute_score(inputs, **kwargs)  # runs in EasyR1's reward actor, which EasyR1 runs with or without zoom
        scoring.append((time.perf_counter() - t3) * 1e3)
        return [(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3], k

    totals, zoomed = [], 0
    for i, batch in enumerate(batches):
        times, zoomed = step(batch)
        if i >= 3:  # warm-up
            for name, value in zip(phases, times):
                phases[name].append(value)
            totals.append(sum(times))
    rows = [(f"zoom bookkeeping: {name}", f"{np.median(v):8.2f} ms") for name, v in phases.items()]
    rows.append(
        (f"zoom bookkeeping per step, {n} responses ({zoomed} zoomed; goal <= 50 ms)", f"{np.median(totals):8.2f} ms")
    )
    rows.append(("gvqa scoring of the same responses (reward actor)", f"{np.median(scoring[3:]):8.2f} ms"))
    return rows


ROLLOUT_RECIPE = """\
data: {{train_files: {rows}, val_files: {rows}, prompt_key: prompt, answer_key: answer, video_key: videos,
  max_prompt_length: 2048, max_response_length: 320, rollout_batch_size: 4, video_fps: 1.0, min_pixels: 3136,
  max_pixels: 12544, shuffle: false, filter_overlong_prompts: false}}
algorithm: {{adv_estimator: tokenadv}}
worker:
  actor: {{global_batch_size: 4, model: {{model_path: {model}}}}}
  rollout: {{n: 8, tensor_parallel_size: 1, temperature: 1.0, enforce_eager: true, dtype: fp32,
    max_num_batched_tokens: 32768}}  # one prefill step: vLLM 0.11 on CPU fails on seeded chunked prefill
  reward:
    reward_type: batch
    reward_function: zoomzero:gvqa
    reward_function_kwargs:
      components: [format, iou, accuracy, zoom]
      zoom: {{enable: true, fps: 2.0, max_visual_tokens: 480, min_frame_pixels: 3136, max_frame_pixels: 50176,
             max_new_tokens: 4}}
"""
STEER = r"<think>[a-z ]{{150}}</think><answer>[A-D]</answer><glue>\[\(({starts})\.0, ({ends})\.0\)\]</glue>"


def rollout_rows(repeats: int) -> list[tuple[str, str]]:
    """A rollout step on EasyR1's vLLMRollout with and without the zoom pass (see the module docstring)."""
    import os
    import socket
    import tempfile
    import time
    from types import SimpleNamespace

    import torch.distributed as dist
    from torchdata.stateful_dataloader import StatefulDataLoader
    from transformers import Qwen2_5_VLForConditionalGeneration
    from verl.protocol import DataProto
    from verl.utils.dataset import RLHFDataset, collate_fn
    from verl.utils.tokenizer import get_processor, get_tokenizer
    from verl.workers.rollout.vllm_rollout_spmd import vLLMRollout
    from verl.workers.sharding_manager.fsdp_vllm import FSDPVLLMShardingManager
    from vllm.sampling_params import StructuredOutputsParams

    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe
    from zoomzero_plugin.hosts.easyr1.zoomzero.zoom_hook import ZoomHook
    from zoomzero_plugin.hosts.options import ZoomOptions
    from zoomzero_plugin.synthetic.benchmark import make_benchmark
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    if not dist.is_initialized():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        for key, value in dict(
            RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
        ).items():
            os.environ.setdefault(key, value)
        dist.init_process_group("gloo", rank=0, world_size=1)
    work = Path(tempfile.mkdtemp(prefix="zoomzero-bench-rollout-"))
    model = build_tiny_qwen(work / "model", for_vllm=True)
    rows = make_benchmark(work / "data", n_videos=4, duration=60.0, seed=1)
    recipe = work / "recipe.yaml"
    recipe.write_text(ROLLOUT_RECIPE.format(rows=rows, model=model))
    config = load_recipe(recipe)[0]
    tokenizer, processor = get_tokenizer(str(model)), get_processor(str(model))
    data = config.data
    dataset = RLHFDataset(
        data_path=data.train_files,
        tokenizer=tokenizer,
        processor=processor,
        prompt_key="prompt",
        answer_key="answer",
        video_key="videos",
        video_fps=data.video_fps,
        max_prompt_length=data.max_prompt_length,
        min_pixels=data.min_pixels,
        max_pixels=data.max_pixels,
        filter_overlong_prompts=False,
    )
    loader = StatefulDataLoader(dataset, batch_size=4, collate_fn=collate_fn)
    prompts = DataProto.from_single_dict(next(iter(loader)))
    rollout = vLLMRollout(str(model), config.worker.rollout, tokenizer, processor)
    hf = Qwen2_5_VLForConditionalGeneration.from_pretrained(model)
    rollout.inference_engine.llm_engine.model_executor.driver_worker.worker.model_runner.model.load_weights(
        iter(FSDPVLLMShardingManager._rename_weight_keys(None, dict(hf.state_dict()), hf).items())
    )
    steer = StructuredOutputsParams(regex=STEER.format(starts="10|30", ends="25|45"))
    letters = StructuredOutputsParams(choice=list("ABCD"))

    from verl.workers.fsdp_workers import FSDPWorker

    from zoomzero_plugin.video_store import shared

    class Identity:  # a rank without tensor parallelism: the sharding manager passes data through
        def preprocess_data(self, data):
            return data

        def postprocess_data(self, data):
            return data

    worker = SimpleNamespace(
        _has_rollout=True,
        generation_config=None,
        tokenizer=tokenizer,
        processor=processor,
        rollout=rollout,
        rollout_sharding_manager=Identity(),
    )

    class WorkerGroup:  # one rank; the zoom hook calls it for its pass (through the worker: the seams run)
        world_size = 1

        def generate_sequences(self, batch):
            batch.meta_info.update(structured_outputs=letters)
            return FSDPWorker.generate_sequences(worker, batch)

    options = ZoomOptions.from_section(
        {"fps": 2.0, "max_visual_tokens": 480, "min_frame_pixels": 3136, "max_frame_pixels": 50176, "max_new_tokens": 4}
    )
    hook = ZoomHook(options, tokenizer, processor, coarse_fps=data.video_fps)
    trainer = SimpleNamespace(actor_rollout_ref_wg=WorkerGroup())

    def coarse():
        gen = prompts.select(
            batch_keys=["input_ids", "attention_mask", "position_ids"],
            non_tensor_batch_keys=["raw_prompt_ids", "multi_modal_data"],
            deepcopy=True,
        )
        gen.meta_info.update(
            min_pixels=data.min_pixels, max_pixels=data.max_pixels, video_fps=data.video_fps, structured_outputs=steer
        )
        out = FSDPWorker.generate_sequences(worker, gen)
        out.non_tensor_batch["ground_truth"] = np.repeat(prompts.non_tensor_batch["ground_truth"], 8)
        out.non_tensor_batch["multi_modal_data"] = np.repeat(prompts.non_tensor_batch["multi_modal_data"], 8)
        return out

    store = shared()

    def step(zoom: bool):
        """One rollout step on videos nothing has decoded yet (every step brings new ones): (coarse s, zoom s,
        the video store's work in each)."""
        store.clear()
        before, start = store.stats(), time.perf_counter()
        out = coarse()
        middle, mid = store.stats(), time.perf_counter()
        stats = hook(trainer, out, "train") if zoom else {}
        return out, stats, (mid - start, time.perf_counter() - mid, middle.minus(before), store.stats().minus(middle))

    step(True)  # warm-up: first decode, first engine calls
    loads, runs, stats = [os.getloadavg()[0]], {"without": [], "with": []}, {}
    for _ in range(repeats):
        for name in ("without", "with"):  # alternate: the machine is shared
            out, got, measured = step(name == "with")
            runs[name].append(measured)
            stats = got or stats
    loads.append(os.getloadavg()[0])
    total = {name: [c + z for c, z, *_ in runs[name]] for name in runs}
    without, with_zoom = np.median(total["without"]), np.median(total["with"])
    pick = runs["with"][int(np.argsort(total["with"])[len(total["with"]) // 2])]  # the median step's counters
    coarse_s, zoom_s, in_coarse, in_zoom = pick
    n = len(out)

    def work(label, s):
        return (
            f"  {label}: decoding {s.decode_s * 1e3:.0f} ms; opens {s.opens}, decodes {s.decodes}, frames "
            f"decoded {s.frames_decoded}, frames from memory {s.hits}",
            "",
        )

    return [
        (
            f"rollout step without the zoom pass ({n} responses, 60-s videos; load avg {loads[0]:.1f}-{loads[1]:.1f})",
            f"{without * 1e3:8.0f} ms",
        ),
        ("rollout step with the zoom pass (same engine and batch)", f"{with_zoom * 1e3:8.0f} ms"),
        ("with / without (goal <= 1.10x)", f"{with_zoom / without:8.2f} x"),
        (
            "  the median step with the zoom pass: coarse generation / zoom pass",
            f"{coarse_s * 1e3:.0f} / {zoom_s * 1e3:.0f} ms",
        ),
        work("coarse pass (4 videos)", in_coarse),
        work(f"zoom pass ({stats.get('zoom/requests', 0):.0f} clip specs)", in_zoom),
        (
            f"zoom requests sent for {n * stats.get('zoom/zoomed_share', 0):.0f} zoomed responses (groups of 8)",
            f"{stats.get('zoom/requests', 0):8.0f}",
        ),
    ]


# -- the multi-turn rollout --------------------------------------------------------------------------------

MT_PROMPT, MT_RESPONSE = 10240, 32768  # yamls/videozoomer.yaml's widths


def mt_videos(root: Path, count: int = 4) -> list[str]:
    from zoomzero_plugin.synthetic.videos import Evidence, write_video

    return [
        str(
            write_video(
                root / f"mt{i}.mp4",
                duration=130.0,
                fps=2,
                width=448,
                height=224,
                evidence=[Evidence(40.0 + i, 50.0 + i, "red")],
            )
        )
        for i in range(count)
    ]


def mt_turns(k: int) -> list[str]:
    """Sample k's script: three calls of 16 frames (8 s at 2 fps) at sample-specific places, then an answer."""
    calls = [
        f"<think>Sample {k} looks again at part {r} of the video, where the square may appear.</think>"
        f'<video_zoom>{{"segment": [{10 + 3 * k + 30 * r}, {18 + 3 * k + 30 * r}], "fps": 2}}</video_zoom>'
        for r in range(3)
    ]
    return calls + ["<think>The square is red in the second clip, so the answer is A.</think><answer>A</answer>"]


class StandInWorker:
    """A rollout worker whose engine returns each trajectory's scripted turn at once (RolloutWorker's interface):
    ``round`` (one call per round) and ``stream`` (request by request; a turn takes one engine step per 64 tokens)."""

    def __init__(self, tokenizer, processor, n):
        self.tokenizer, self.processor, self.n = tokenizer, processor, n
        self.prompt_length, self.response_length = MT_PROMPT, MT_RESPONSE
        eos = tokenizer.eos_token_id
        self.script = [
            [
                tokenizer.encode(t, add_special_tokens=False) + ([eos] if r == 3 else [])
                for r, t in enumerate(mt_turns(k))
            ]
            for k in range(n)
        ]
        self.rounds = 0

    def default_n(self):
        return self.n

    def round(self, raw_prompt_ids, multi_modal_data, meta_info):
        from zoomzero_plugin.hosts.easyr1.generation import Completion

        r, self.rounds = self.rounds, self.rounds + 1
        if r == 0:
            return [[Completion(self.script[k][0]) for k in range(meta_info["n"])] for _ in raw_prompt_ids]
        # after round 0 every trajectory is active until its answer: the same sample order every round
        per_prompt = len(raw_prompt_ids) // self.n
        return [[Completion(self.script[i % self.n][r])] for i in range(per_prompt * self.n)]

    def stream(self, meta_info):
        return StandInStream(self)


class StandInStream:
    """The stand-in engine request by request: sample i (its key) says its script's next turn."""

    def __init__(self, worker):
        self.worker, self.turn, self.running = worker, {}, {}

    @property
    def pending(self):
        return len(self.running)

    def submit(self, items):
        for keys, _, _, _ in items:
            for key in keys:
                turn = self.turn.get(key, 0)
                self.turn[key] = turn + 1
                ids = self.worker.script[key % self.worker.n][turn]
                self.running[key] = [ids, -(-len(ids) // 64)]

    def step(self):
        from zoomzero_plugin.hosts.easyr1.generation import Completion

        done = []
        for key, job in self.running.items():
            job[1] -= 1
            if job[1] == 0:
                done.append((key, Completion(job[0])))
        for key, _ in done:
            del self.running[key]
        return done

    def close(self):
        self.running.clear()


def mt_prompts(tokenizer, videos, prompts):
    """What EasyR1 hands the rollout: raw prompt ids and media (with the row's ground truth) per prompt."""
    from verl.protocol import DataProto

    from zoomzero_plugin.agent import question_text
    from zoomzero_plugin.hosts.easyr1.generation import ROW_FIELDS_KEY

    options = ("red", "green", "blue", "yellow")
    raw, media = np.empty(prompts, dtype=object), np.empty(prompts, dtype=object)
    for i in range(prompts):
        truth = GroundTruth("A", options, ((40.0, 50.0),), 130.0, f"q{i}", f"What colour is the square ({i})?")
        raw[i] = tokenizer.encode(question_text(truth.question, options), add_special_tokens=False)
        media[i] = {"videos": [videos[i % len(videos)]], ROW_FIELDS_KEY: {"ground_truth": truth.to_json()}}
    meta = {
        "min_pixels": 3136,
        "max_pixels": 12544,
        "video_fps": 0.5,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    shape = torch.zeros((prompts, 1), dtype=torch.long)
    return DataProto.from_dict(
        tensors={"input_ids": shape, "attention_mask": shape, "position_ids": shape},
        non_tensors={"raw_prompt_ids": raw, "multi_modal_data": media},
        meta_info=meta,
    )


def mt_step(tokenizer, processor, videos, prompts, n, timings=None, schedule="continuous"):
    """One rollout step with the stand-in engine; ``timings`` gets the assembly's share."""
    import time

    from zoomzero_plugin.hosts.easyr1.zoomzero import agent_rollout
    from zoomzero_plugin.hosts.options import AgentOptions

    batch = mt_prompts(tokenizer, videos, prompts)
    options = AgentOptions.from_section({"schedule": schedule})
    assemble = agent_rollout.assemble

    def timed(*args, **kwargs):
        start = time.perf_counter()
        out = assemble(*args, **kwargs)
        if timings is not None:
            timings.append(time.perf_counter() - start)
        return out

    agent_rollout.assemble = timed
    try:
        return agent_rollout.AgentRollout(StandInWorker(tokenizer, processor, n), options).run(batch)
    finally:
        agent_rollout.assemble = assemble


def single_turn_batch(tokenizer, lengths, n):
    """The batch EasyR1's own vLLMRollout.generate_sequences builds for responses of ``lengths`` tokens (n per
    prompt), at the same widths, with prompts as EasyR1's dataset pads them."""
    from types import SimpleNamespace

    from verl.protocol import DataProto
    from verl.workers.rollout.vllm_rollout_spmd import vLLMRollout
    from vllm import RequestOutput, SamplingParams

    prompts = len(lengths) // n

    class Engine:
        def generate(self, prompts, sampling_params, use_tqdm=False, lora_request=None):
            return [
                RequestOutput([SimpleNamespace(token_ids=[7] * lengths[i * n + k]) for k in range(n)])
                for i in range(len(prompts))
            ]

    rollout = vLLMRollout.__new__(vLLMRollout)
    rollout.rank, rollout.use_tqdm, rollout.pad_token_id = 0, False, tokenizer.pad_token_id
    rollout.config = SimpleNamespace(response_length=MT_RESPONSE)
    rollout.return_video_metadata, rollout.lora_kwargs = False, {}
    rollout.inference_engine, rollout.sampling_params = Engine(), SamplingParams(n=n, max_tokens=MT_RESPONSE)
    raw = np.empty(prompts, dtype=object)
    raw[:] = [[5] * 100 for _ in range(prompts)]
    batch = DataProto.from_dict(
        tensors={
            "input_ids": torch.zeros((prompts, MT_PROMPT), dtype=torch.long),
            "attention_mask": torch.ones((prompts, MT_PROMPT), dtype=torch.long),
            "position_ids": torch.zeros((prompts, 4, MT_PROMPT), dtype=torch.long),
        },
        non_tensors={"raw_prompt_ids": raw},
        meta_info={"eos_token_id": tokenizer.eos_token_id},
    )
    return rollout.generate_sequences(batch)


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def mt_memory_child(kind: str, prompts: int, n: int, workdir: str) -> None:
    """In a fresh process: peak RSS growth (MB) while building one batch; prints one JSON line. The peak is
    VmHWM after resetting it (/proc/self/clear_refs), so imports and the warm-up do not count."""
    import json

    torch.set_num_threads(1)
    import_easyr1_trainer()
    from zoomzero_plugin.synthetic.tiny_qwen import build_processor

    processor = build_processor()
    videos = sorted(str(p) for p in Path(workdir).glob("mt*.mp4"))
    lengths = json.loads((Path(workdir) / "lengths.json").read_text())[: prompts * n]
    if kind == "multi":
        mt_step(processor.tokenizer, processor, videos, 4, n)  # warm: imports, the overviews' decode, caches
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    before = _status_kb("VmRSS")
    batch = (
        mt_step(processor.tokenizer, processor, videos, prompts, n)
        if kind == "multi"
        else single_turn_batch(processor.tokenizer, lengths, n)
    )
    peak, held = _status_kb("VmHWM") - before, _status_kb("VmRSS") - before
    print(json.dumps({"peak_mb": peak / 1024, "held_mb": held / 1024, "rows": len(batch)}))


def multiturn_rows(tokenizer, processor, prompts, n, memory_prompts, repeats):
    import json
    import os
    import subprocess
    import tempfile
    import time

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        videos = mt_videos(Path(tmp))
        mt_step(tokenizer, processor, videos, 4, n)  # warm-up: decodes the 4 overviews and every clip once
        load = os.getloadavg()[0]
        totals, assembly, single, by_schedule = [], [], [], {"continuous": [], "rounds": []}
        for _ in range(repeats):
            start = time.perf_counter()
            batch = mt_step(tokenizer, processor, videos, prompts, n, assembly)
            totals.append(time.perf_counter() - start)
            lengths = batch.batch["attention_mask"][:, MT_PROMPT:].sum(-1).tolist()
            stats, sampled = batch.non_tensor_batch["agent_stats"], int(batch.batch["response_mask"].sum())
            del batch
            start = time.perf_counter()
            mt_step(tokenizer, processor, videos, prompts, n, [], schedule="rounds")
            by_schedule["rounds"].append(time.perf_counter() - start)
            start = time.perf_counter()
            built = single_turn_batch(tokenizer, lengths, n)
            single.append(time.perf_counter() - start)
            del built
        total, asm, base, rounds = min(totals), min(assembly), min(single), min(by_schedule["rounds"])
        extent = sum(lengths)
        rows += [
            (
                f"multi-turn rollout step, one worker's share: {prompts}x{n} trajectories, {stats[0]['turns']} rounds, "
                f"stand-in engine, continuous schedule (goal <= 0.5 s; load avg {load:.1f})",
                f"{total:8.2f} s",
            ),
            ("  turns, environments, clips, observations, turn inputs", f"{total - asm:8.2f} s"),
            ("  assembly (ids, masks, M-RoPE positions, media)", f"{asm:8.2f} s"),
            ("  the same step, round-by-round schedule", f"{rounds:8.2f} s"),
            ("  for scale: EasyR1's own single-turn batch of the same lengths and widths", f"{base:8.2f} s"),
            (
                "  tokens per trajectory: response (sampled + observation)",
                f"{extent / len(lengths):8.0f} ({sampled / len(lengths):.0f} + "
                f"{(extent - sampled) / len(lengths):.0f})",
            ),
        ]
        small = mt_step(tokenizer, processor, videos, memory_prompts, n)
        lengths = small.batch["attention_mask"][:, MT_PROMPT:].sum(-1).tolist()
        (Path(tmp) / "lengths.json").write_text(json.dumps(lengths))
        del small
        memory = {}
        for kind in ("single", "multi"):
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--memory-child",
                    kind,
                    "--mt-memory-prompts",
                    str(memory_prompts),
                    "--mt-n",
                    str(n),
                    "--workdir",
                    tmp,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            memory[kind] = json.loads(out.stdout.strip().splitlines()[-1])
        single, multi = memory["single"], memory["multi"]
        rows += [
            (
                f"peak memory, single-turn batch of {memory_prompts * n} (EasyR1's generate_sequences)",
                f"{single['peak_mb']:8.0f} MB",
            ),
            (f"peak memory, multi-turn rollout + its batch of {memory_prompts * n}", f"{multi['peak_mb']:8.0f} MB"),
            (
                "  extra vs single-turn (peak; held after the step)",
                f"{multi['peak_mb'] - single['peak_mb']:8.0f} MB ({multi['held_mb'] - single['held_mb']:.0f} MB held)",
            ),
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--responses", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--group", type=int, default=8, help="responses per prompt (rollout.n)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--vllm", action="store_true", help="add a rollout step on vLLM's CPU engine (needs vLLM)")
    parser.add_argument(
        "--only",
        choices=("advantage", "zoom", "multiturn", "rollout"),
        help="run one section (rollout: only the vLLM rollout step; implies --vllm)",
    )
    parser.add_argument(
        "--mt-prompts",
        type=int,
        default=16,
        help="prompts per multi-turn step (16: one rollout worker's share of 128 on 8 GPUs)",
    )
    parser.add_argument("--mt-n", type=int, default=16, help="trajectories per prompt")
    parser.add_argument("--mt-repeats", type=int, default=3, help="multi-turn steps timed (fastest kept)")
    parser.add_argument("--mt-memory-prompts", type=int, default=16, help="prompts of the memory comparison")
    parser.add_argument("--memory-child", choices=("single", "multi"), help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        return mt_memory_child(args.memory_child, args.mt_memory_prompts, args.mt_n, args.workdir)
    torch.set_num_threads(1)
    ray_trainer = import_easyr1_trainer()
    from zoomzero_plugin.synthetic.tiny_qwen import build_processor

    processor = build_processor()
    tokenizer = processor.tokenizer
    rows = []
    if args.only in (None, "advantage"):
        rows += advantage_rows(ray_trainer, tokenizer, args.responses, args.tokens, args.group, args.repeats)
    if args.only in (None, "zoom"):
        rows += zoom_rows(tokenizer, processor, args.responses, args.tokens, args.group, args.repeats)
    if args.only in (None, "multiturn"):
        rows += multiturn_rows(
            tokenizer, processor, args.mt_prompts, args.mt_n, args.mt_memory_prompts, args.mt_repeats
        )
    if args.vllm or args.only == "rollout":
        rows += rollout_rows(max(3, args.repeats // 4))
    import verl

    print_table(f"EasyR1 host (EasyR1 {verl.__version__}, torch threads 1, median of {args.repeats})", rows)


if __name__ == "__main__":
    main()
