"""The generic multi-turn pieces of the host, on hand-made conversations and EasyR1's real code: the batch layout,
the per-sample media seam, the reward managers' response extent, frame references, generation routing."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from zoomzero_plugin.agent.frames import FrameReader
from zoomzero_plugin.hosts.easyr1 import frame_refs
from zoomzero_plugin.hosts.easyr1.conversation import Conversation, Piece
from zoomzero_plugin.hosts.easyr1.errors import PluginError
from zoomzero_plugin.hosts.easyr1.generation import ROLLOUT_KEY, RoutedWorkerGroup, routed, unrouted
from zoomzero_plugin.hosts.easyr1.hookspecs import Rollout, hookimpl
from zoomzero_plugin.hosts.easyr1.multiturn import Layout, assemble
from zoomzero_plugin.hosts.easyr1.registry import PluginHost
from zoomzero_plugin.vision import merged_grid

from .helpers import reward_manager_class

IMG, PAD = 9, 0
LAYOUT = Layout(image_token_id=IMG, pad_token_id=PAD, prompt_length=6, response_length=10)


def conversations():
    """A: prompt [1, IMG(1x2), 2], response: sampled [3, 4], observation [5, IMG(2x1)], sampled [6].
    B: prompt [7], response: sampled [8] (no images)."""
    a = Conversation(
        Piece([1, IMG, 2], False, images=["a0"], grids=[(1, 2)]),
        [
            Piece([3, 4], True, logprobs=[-0.5, -0.25]),
            Piece([5, IMG], False, images=["a1"], grids=[(2, 1)]),
            Piece([6], True, logprobs=[-1.0]),
        ],
    )
    b = Conversation(Piece([7], False), [Piece([8], True, logprobs=[-2.0])])
    return [a, b]


def test_assemble_lays_out_ids_masks_positions_and_media_by_hand():
    out = assemble(conversations(), LAYOUT, sampled_log_probs=True)
    t = out["tensors"]
    # A expanded: prompt [1, I, I, 2] (4 tokens, 2 left pads); response [3, 4, 5, I, I, 6] (6 tokens, 4 right pads)
    assert t["input_ids"][0].tolist() == [0, 0, 1, 9, 9, 2, 3, 4, 5, 9, 9, 6, 0, 0, 0, 0]
    assert t["attention_mask"][0].tolist() == [0, 0] + [1] * 10 + [0] * 4
    assert t["response_mask"][0].tolist() == [1, 1, 0, 0, 0, 1, 0, 0, 0, 0]
    assert t["rollout_log_probs"][0].tolist() == [-0.5, -0.25, 0, 0, 0, -1.0, 0, 0, 0, 0]
    assert torch.equal(t["prompts"], t["input_ids"][:, :6]) and torch.equal(t["responses"], t["input_ids"][:, 6:])
    pos = t["position_ids"][0]
    # text row: 0..9 over the real tokens; M-RoPE: 1 -> 0, image 1x2 at 1 -> (1,1,1),(1,1,2), then 2 -> 3, 3 -> 4,
    # 4 -> 5, 5 -> 6, image 2x1 at 7 -> (7,7,7),(7,8,7), then 6 -> 9; padding 0
    assert pos[0].tolist() == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert pos[1].tolist() == [0, 0, 0, 1, 1, 3, 4, 5, 6, 7, 7, 9, 0, 0, 0, 0]
    assert pos[2].tolist() == [0, 0, 0, 1, 1, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0]
    assert pos[3].tolist() == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 7, 9, 0, 0, 0, 0]
    assert t["input_ids"][1].tolist() == [0] * 5 + [7, 8] + [0] * 9
    assert t["response_mask"][1].tolist() == [1] + [0] * 9
    media = out["non_tensors"]
    assert [m["images"] for m in media["multi_modal_data"]] == [["a0", "a1"], []]
    assert len(set(media["media_uid"])) == 2


def test_media_uids_name_the_media_so_equal_media_are_processed_once():
    refs = frame_refs.frame_refs("v.mp4", [0, 8, 16], 100352, 25088)
    same = [Conversation(Piece([IMG], False, images=refs[:1], grids=[(1, 1)]), [Piece([1], True)]) for _ in range(2)]
    other = Conversation(Piece([IMG], False, images=refs[1:2], grids=[(1, 1)]), [Piece([1], True)])
    uids = assemble([*same, other], LAYOUT)["non_tensors"]["media_uid"]
    assert uids[0] == uids[1] != uids[2]
    assert assemble(same, LAYOUT)["non_tensors"]["media_uid"][0] != uids[0], "keys never repeat across batches"


def test_assemble_in_chunks_gives_the_same_batch():
    whole, pieces = (
        assemble(conversations() * 3, LAYOUT)["tensors"],
        assemble(conversations() * 3, LAYOUT, chunk=2)["tensors"],
    )
    assert all(torch.equal(whole[k], pieces[k]) for k in whole)


def test_assemble_refuses_what_does_not_fit_or_does_not_add_up():
    a, _ = conversations()
    with pytest.raises(ValueError, match="prompt width 3"):
        assemble([a], Layout(IMG, PAD, prompt_length=3, response_length=10))
    with pytest.raises(ValueError, match="response width 5"):
        assemble([a], Layout(IMG, PAD, prompt_length=6, response_length=5))
    with pytest.raises(ValueError, match="2 image placeholders in the ids but 1 images"):
        assemble([Conversation(Piece([IMG, IMG], False, images=["x"], grids=[(1, 1)]), [Piece([1], True)])], LAYOUT)
    with pytest.raises(ValueError, match="log-probs"):
        Piece([1, 2], True, logprobs=[0.0])


@pytest.mark.parametrize(("width", "height"), [(112, 84), (224, 168), (100, 50), (30, 30), (1000, 700)])
def test_merged_grid_is_what_the_processor_gives(easyr1_processor, width, height):
    from PIL import Image

    out = easyr1_processor.image_processor(images=[Image.new("RGB", (width, height))], return_tensors="pt")
    _, gh, gw = out["image_grid_thw"][0].tolist()
    assert merged_grid(easyr1_processor.image_processor, width, height) == (gh // 2, gw // 2)


# -- seams on EasyR1's real code ------------------------------------------------------------------------------


@pytest.fixture
def frame_cache():
    """A frame cache over the agent's reader, handed to the seam as a rollout hands it (the previous one restored)."""
    before = frame_refs.installed()
    yield frame_refs.install(frame_refs.FrameCache(FrameReader))
    frame_refs._installed[:] = [before] if before is not None else []


def media_batch(evidence_video, media_uid=True):
    from verl.protocol import DataProto

    refs = [frame_refs.frame_ref(str(evidence_video), [0, 8, 16], k, 100352, 25088) for k in range(3)]
    data = [{"images": refs[:1]}, {"images": refs[:1] + refs[1:]}]  # one prompt, two samples, different clips
    non_tensors = {"uid": np.array(["u", "u"], dtype=object), "multi_modal_data": np.array(data, dtype=object)}
    if media_uid:
        non_tensors["media_uid"] = np.array(["m0", "m1"], dtype=object)
    return DataProto.from_dict(
        tensors={"x": torch.zeros(2, 1)},
        non_tensors=non_tensors,
        meta_info={"min_pixels": 3136, "max_pixels": 12544, "video_fps": 1.0},
    )


def test_each_sample_gets_its_own_media_in_easyr1s_actor_input(evidence_video, easyr1_processor, frame_cache):
    from verl.workers.fsdp_workers import FSDPWorker

    data = media_batch(evidence_video)
    FSDPWorker._process_multi_modal_inputs(SimpleNamespace(_cache={}, processor=easyr1_processor), data)
    inputs = data.non_tensor_batch["multi_modal_inputs"]
    assert [len(x["image_grid_thw"]) for x in inputs] == [1, 3]
    assert data.non_tensor_batch["uid"].tolist() == ["u", "u"], "the group uid is restored"
    # without media_uid, EasyR1 gives sample 1 the media of sample 0 (one processing per uid)
    plain = media_batch(evidence_video, media_uid=False)
    FSDPWorker._process_multi_modal_inputs(SimpleNamespace(_cache={}, processor=easyr1_processor), plain)
    assert [len(x["image_grid_thw"]) for x in plain.non_tensor_batch["multi_modal_inputs"]] == [1, 1]


def test_frame_refs_decode_once_per_group_at_the_authors_size(evidence_video, frame_cache):
    from PIL import Image
    from verl.utils import dataset

    refs = [frame_refs.frame_ref(str(evidence_video), [0, 8, 16], k, 100352, 25088) for k in range(3)]
    images = [dataset.process_image(r, 3136, 12544) for r in refs]  # EasyR1's own pixel limits are not applied
    assert frame_cache.reads == 1
    assert {im.size for im in images} == {(224, 168)}  # 37,632 px: under 100,352, never resized
    plain = dataset.process_image(Image.new("RGB", (224, 168)), 3136, 12544)
    assert plain.width * plain.height <= 12544, "ordinary images still get EasyR1's limits"


def test_a_frame_ref_without_an_installed_cache_is_named(evidence_video, frame_cache):
    from verl.utils import dataset

    frame_refs._installed.clear()  # a process where no rollout handed the seam its cache
    ref = frame_refs.frame_ref(str(evidence_video), [0, 8], 1, 100352, 25088)
    with pytest.raises(RuntimeError, match=r"no plugin installed a frame cache in this process \(frame_refs.install\)"):
        dataset.process_image(ref, 3136, 12544)


class OverlapProbe:
    """Stands in front of a decord reader and records whether two threads were ever inside ``get_batch`` at once.

    The first thread in waits (up to ``wait`` s) for a second one to enter: if decoding is not serialised, the
    second thread does enter while the first is inside, every time, not by luck of scheduling."""

    def __init__(self, real, wait=1.0):
        import threading

        self.real, self.wait = real, wait
        self.inside, self.most_inside = 0, 0
        self._lock, self._entered = threading.Lock(), threading.Condition(threading.Lock())

    def get_batch(self, indices):
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        with self._entered:
            self._entered.notify_all()
            self._entered.wait_for(lambda: self.inside > 1, timeout=self.wait)
        try:
            return self.real.get_batch(indices)
        finally:
            with self._lock:
                self.inside -= 1

    def __len__(self):
        return len(self.real)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _in_two_threads(fn):
    import threading

    start, got, errors = threading.Barrier(2), [], []

    def run():
        start.wait(timeout=10)
        try:
            got.append(fn())
        except Exception as e:  # noqa: BLE001  (reported by the test)
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    return got


def test_two_threads_reading_one_video_never_share_a_decord_reader(evidence_video, monkeypatch):
    import threading

    from zoomzero_plugin.video_store import VideoStore

    store, probes = VideoStore(), []
    opened = store._open

    def open_probed(path):  # every decord reader the store opens, behind a probe
        probes.append(OverlapProbe(opened(path)))
        return probes[-1]

    monkeypatch.setattr(store, "_open", open_probed)
    cache = frame_refs.FrameCache(lambda path: FrameReader(path, store))
    cache.reader(str(evidence_video))
    groups, take = iter([[0, 8], [4, 12]]), threading.Lock()

    def read_a_group():  # each thread another group of the one video: both miss the cache
        with take:
            frames = next(groups)
        return len(cache.group(str(evidence_video), frames, 100352, 25088))

    got = _in_two_threads(read_a_group)
    assert [p.most_inside for p in probes] == [1, 1], "a decord reader was entered by two threads at once"
    assert got == [2, 2] and cache.reads == 2 and store.stats().opens == 2, "the second thread opened its own reader"


def test_the_same_group_decoded_by_two_threads_is_stored_and_counted_once(evidence_video, monkeypatch):
    import threading

    cache = frame_refs.FrameCache(FrameReader)
    reader = cache.reader(str(evidence_video))
    both_read = threading.Barrier(2)
    original = type(reader).read

    def slow_read(self, *args, **kwargs):  # both threads miss the cache before either stores the group
        images = original(self, *args, **kwargs)
        both_read.wait(timeout=10)
        return images

    monkeypatch.setattr(type(reader), "read", slow_read)
    got = _in_two_threads(lambda: cache.group(str(evidence_video), [0, 8], 100352, 25088))
    assert cache.reads == 2 and len(got) == 2 and got[0] is got[1], "one stored group, handed to both threads"
    assert cache._bytes == 2 * 224 * 168 * 3, "two 224x168 RGB frames held, counted once"


def test_the_reward_manager_scores_a_response_with_holes_over_its_extent(ppo_config, easyr1_tokenizer):
    from verl.protocol import DataProto
    from verl.workers.reward.config import RewardConfig

    seen = []

    class Manager(reward_manager_class()):
        def __init__(self, tokenizer):
            self.tokenizer, self.config = tokenizer, RewardConfig(skip_special_tokens=False)
            self.reward_type = "batch"  # EasyR1 main reads it
            self.reward_fn = lambda inputs: [seen.append(x) or {"overall": 1.0} for x in inputs]

    tok = easyr1_tokenizer
    turn1, obs, turn2 = (tok.encode(t, add_special_tokens=False) for t in ("<think>a</think>", "<|im_end|>OBS", "B"))
    row = turn1 + obs + turn2
    responses = torch.tensor([row + [tok.pad_token_id] * 3])
    mask = torch.tensor([[1] * len(turn1) + [0] * len(obs) + [1] * len(turn2) + [0] * 3])
    attention = torch.cat([torch.ones(1, 2, dtype=torch.long), (torch.arange(mask.size(1)) < len(row)).long()[None]], 1)
    data = DataProto.from_dict(
        tensors={"responses": responses, "response_mask": mask, "attention_mask": attention},
        non_tensors={"ground_truth": np.array(["B"], dtype=object)},
    )
    scores, _ = Manager(tok).compute_reward(data)
    assert seen[0]["response"] == "<think>a</think><|im_end|>OBSB" and seen[0]["response_length"] == len(row)
    assert scores[0, len(row) - 1] == 1.0 and scores.sum() == 1.0
    assert torch.equal(data.batch["response_mask"], mask), "the batch keeps its holes"


# -- routing -------------------------------------------------------------------------------------------------


class Group:
    def __init__(self):
        self.seen, self.world_size = [], 2

    def generate_sequences(self, prompts):
        self.seen.append(dict(prompts.meta_info))
        return SimpleNamespace(meta_info=dict(prompts.meta_info))


ROLLOUT = Rollout(name="demo", options=lambda config: {"k": 1}, generate=lambda w, p, o: p)


def test_routed_generation_marks_batches_and_hooks_get_the_real_group():
    trainer = SimpleNamespace(actor_rollout_ref_wg=Group())
    real = trainer.actor_rollout_ref_wg
    with routed(trainer, (ROLLOUT, {"k": 1})):
        out = trainer.actor_rollout_ref_wg.generate_sequences(SimpleNamespace(meta_info={"n": 2}))
        assert real.seen[-1][ROLLOUT_KEY] == {"name": "demo", "options": {"k": 1}} and ROLLOUT_KEY not in out.meta_info
        assert trainer.actor_rollout_ref_wg.world_size == 2
        with unrouted(trainer):
            assert trainer.actor_rollout_ref_wg is real
        assert isinstance(trainer.actor_rollout_ref_wg, RoutedWorkerGroup)
    assert trainer.actor_rollout_ref_wg is real
    with routed(trainer, None):
        assert trainer.actor_rollout_ref_wg is real


def test_a_worker_without_the_rollout_stops_with_its_name():
    from verl.workers.fsdp_workers import FSDPWorker

    prompts = SimpleNamespace(meta_info={ROLLOUT_KEY: {"name": "nowhere", "options": {}}})
    with pytest.raises(PluginError, match="'nowhere'.*installed: \\['videozoomer'\\]"):
        FSDPWorker.generate_sequences(SimpleNamespace(rollout=None), prompts)


class Offers:
    def __init__(self, rollout):
        self.rollout = rollout

    @hookimpl
    def easyr1_rollouts(self):
        return [self.rollout]


def test_a_recipe_may_enable_one_rollout_only():
    other = Rollout("other", lambda config: {} if config.both else None, lambda w, p, o: p)
    host = PluginHost.load(extra={"a": Offers(ROLLOUT), "b": Offers(other)}, blocked=["zoomzero"])
    assert host.rollout_for(SimpleNamespace(both=False)) == (ROLLOUT, {"k": 1})
    with pytest.raises(PluginError, match="several rollouts \\(demo, other\\)"):
        host.rollout_for(SimpleNamespace(both=True))


def test_segment_encoder_equals_the_tokenizer_on_observation_texts(easyr1_tokenizer):
    from hypothesis import given, settings, strategies as st

    from zoomzero_plugin.hosts.easyr1.conversation import SegmentEncoder

    pieces = st.sampled_from(
        [
            "<|im_end|>",
            "<|im_start|>user\n",
            "<frame0_time1.50s>",
            "<|vision_start|>",
            "<|image_pad|>",
            "<|vision_end|>",
            "Error: x",
            " \n",
            "<tool_response>",
            "ü",
            "<|im",
        ]
    )
    encoder = SegmentEncoder(easyr1_tokenizer)

    @settings(max_examples=80)
    @given(st.lists(st.lists(pieces, max_size=12).map("".join), min_size=1, max_size=4))
    def check(texts):
        assert encoder(texts) == [easyr1_tokenizer.encode(t, add_special_tokens=False) for t in texts]

    check()


def test_segment_encoder_cache_is_bounded(easyr1_tokenizer):
    """A run's first prompts are all distinct: the cache is emptied when it would pass its bound, and the ids stay
    exactly the tokenizer's, the entries of the call that emptied it included."""
    from zoomzero_plugin.hosts.easyr1.conversation import SegmentEncoder

    encoder = SegmentEncoder(easyr1_tokenizer, max_cached_ids=40)
    for k in range(30):
        texts = [f"question {k} about the red square<|im_end|>", "<|im_start|>user\nshared instructions<|im_end|>"]
        assert encoder(texts) == [easyr1_tokenizer.encode(t, add_special_tokens=False) for t in texts]
        assert encoder._cached_ids == sum(map(len, encoder._cache.values())) <= 40
    assert len(encoder._cache) < 30


def reference_rows(conversation, layout):
    """One conversation's rows, token by token from the definitions (the module docstring and Qwen's rule): ids,
    attention, response mask, log-probs, and the four position rows; the prompt right-aligned, padding 0/pad."""
    ids, sampled, logprob, rope = [], [], [], []
    pos = 0
    for piece in [conversation.prompt, *conversation.response]:
        grids = iter(piece.grids)
        for k, token in enumerate(piece.ids):
            lp = piece.logprobs[k] if piece.logprobs is not None else 0.0
            if token == layout.image_token_id:
                h, w = next(grids)
                for i in range(h):
                    for j in range(w):
                        ids.append(token), sampled.append(piece.sampled), logprob.append(lp)
                        rope.append((pos, pos + i, pos + j))
                pos += max(h, w)
            else:
                ids.append(token), sampled.append(piece.sampled), logprob.append(lp)
                rope.append((pos, pos, pos))
                pos += 1
    p, n = conversation.prompt.tokens, len(ids)
    left, right = layout.prompt_length - p, layout.response_length - (n - p)
    row = [layout.pad_token_id] * left + ids + [layout.pad_token_id] * right
    positions = [[0] * left + list(range(n)) + [0] * right] + [
        [0] * left + [r[a] for r in rope] + [0] * right for a in range(3)
    ]
    return {
        "input_ids": row,
        "attention_mask": [0] * left + [1] * n + [0] * right,
        "response_mask": [int(s) for s in sampled[p:]] + [0] * right,
        "rollout_log_probs": logprob[p:] + [0.0] * right,
        "position_ids": positions,
    }


def random_conversation(rng, image):
    """A prompt and 0–5 response pieces, sampled or not, with 0–3 images each of random grids."""

    def piece(sampled):
        ids = [int(rng.integers(1, 8)) for _ in range(int(rng.integers(0, 6)))]
        grids = []
        for _ in range(int(rng.integers(0, 3)) if not sampled else 0):
            ids.insert(int(rng.integers(0, len(ids) + 1)), image)
            grids.append((int(rng.integers(1, 4)), int(rng.integers(1, 4))))
        logprobs = [float(-rng.random()) for _ in ids] if sampled and rng.random() < 0.8 else None
        return Piece(ids, sampled, images=[f"im{rng.integers(1 << 30)}" for _ in grids], grids=grids, logprobs=logprobs)

    return Conversation(piece(False), [piece(bool(rng.random() < 0.5)) for _ in range(int(rng.integers(0, 6)))])


@pytest.mark.parametrize("seed", range(8))
def test_assemble_equals_a_token_by_token_reference(seed):
    rng = np.random.default_rng(seed)
    wide = seed == 1  # tensors over 1 MB: the zero tensors are lazily zeroed maps
    batch = [random_conversation(rng, IMG) for _ in range(8 if wide else int(rng.integers(1, 12)))]
    width_p = max(c.prompt.tokens for c in batch) + int(rng.integers(0, 3))
    width_r = max(c.response_tokens for c in batch) + (1 << 16 if wide else int(rng.integers(0, 3)))
    layout = Layout(IMG, pad_token_id=99, prompt_length=width_p, response_length=width_r)
    out = assemble(batch, layout, sampled_log_probs=True, chunk=int(rng.integers(1, 5)))
    t = out["tensors"]
    for i, conversation in enumerate(batch):
        want = reference_rows(conversation, layout)
        for key in ("input_ids", "attention_mask", "response_mask", "position_ids"):
            assert torch.equal(t[key][i], torch.tensor(want[key])), (key, i)
        assert torch.equal(t["rollout_log_probs"][i], torch.tensor(want["rollout_log_probs"], dtype=torch.float32))
        assert out["non_tensors"]["multi_modal_data"][i] == {"images": conversation.images()}
    assert t["input_ids"].dtype == t["position_ids"].dtype == t["response_mask"].dtype == torch.long
    assert torch.equal(t["prompts"], t["input_ids"][:, :width_p]) and torch.equal(
        t["responses"], t["input_ids"][:, width_p:]
    )


def test_images_and_placeholders_must_match_both_ways():
    with pytest.raises(ValueError, match="1 image placeholders in the ids but 2 images"):
        assemble(
            [Conversation(Piece([IMG], False, images=["x", "y"], grids=[(1, 1), (1, 1)]), [Piece([1], True)])], LAYOUT
        )


class SizedFrames:
    """A frame source whose images show the pixel limits they were read with (width = min_pixels, height 1)."""

    info = None

    def read(self, indices, max_pixels, min_pixels):
        from PIL import Image

        return [Image.new("RGB", (min_pixels, 1)) for _ in indices]


def test_a_frame_group_is_keyed_by_every_pixel_limit():
    cache = frame_refs.FrameCache(lambda path: SizedFrames())
    small, large = cache.group("v.mp4", [0], 100, 10)[0], cache.group("v.mp4", [0], 100, 50)[0]
    assert (small.width, large.width, cache.reads) == (10, 50, 2)
    assert frame_refs.group_key("v.mp4", [0], 100, 10) != frame_refs.group_key("v.mp4", [0], 100, 50)
    assert cache.group("v.mp4", [1], 100, 500)[0].width == 100  # a lower limit above the upper one: the upper


def test_the_frame_cache_holds_exactly_its_capacity():
    """Two groups of one 10 x 1 RGB frame (30 bytes each) fill a 60-byte cache exactly: both stay; a third evicts
    the least recently used."""
    cache = frame_refs.FrameCache(lambda path: SizedFrames(), max_bytes=60)
    cache.group("v.mp4", [0], 100, 10)
    cache.group("v.mp4", [1], 100, 10)
    cache.group("v.mp4", [0], 100, 10)  # cached: no read
    assert cache.reads == 2
    cache.group("v.mp4", [2], 100, 10)  # 90 bytes: [1] (least recently used) goes
    cache.group("v.mp4", [0], 100, 10)
    assert cache.reads == 3
    cache.group("v.mp4", [1], 100, 10)
    assert cache.reads == 4


def test_the_frame_cache_keeps_exactly_max_readers_open():
    opened = []
    cache = frame_refs.FrameCache(lambda path: opened.append(path) or SizedFrames(), max_readers=2)
    for path in ("a", "b", "a", "b"):
        cache.reader(path)
    assert opened == ["a", "b"]  # two readers fit
    cache.reader("c")  # a third: the least recently used ("a") is closed
    cache.reader("b")
    cache.reader("a")
    assert opened == ["a", "b", "c", "a"]


def test_a_frame_reference_names_video_frames_and_pick():
    ref = frame_refs.frame_ref("v.mp4", [0, 8], 1, 100352, 25088)
    assert frame_refs.is_frame_ref(ref)
    for key in frame_refs.FRAME_KEYS:  # an image that lacks any of them is EasyR1's to read
        assert not frame_refs.is_frame_ref({k: v for k, v in ref.items() if k != key})
