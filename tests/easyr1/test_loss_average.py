"""loss_avg_mode through EasyR1's own DataParallelPPOActor.update_policy (one CPU process, gloo, world size 1):
``seq`` gives Zoom-Zero Eq. 2 (each response's token mean, then the mean over responses), as the authors'
released config computes it; EasyR1's own ``seq`` (the unwrapped method) gives the token mean instead.

The policy is a tiny linear language model; with old log-probs equal to the current ones the PPO ratio is 1, so
the gradient of the loss is -Σ w_{i,t} A_i ∇ log p_{i,t} and one SGD step of size 1 moves the weights by it."""

import copy
import os
import socket
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

VOCAB, PROMPT, RESPONSE = 8, 2, 4
LENGTHS = [4, 1, 2, 3]  # response tokens of the four responses
ADVANTAGES = [1.0, -2.0, 0.5, 3.0]


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(VOCAB, 6)
        self.head = nn.Linear(6, VOCAB)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=False, **kwargs):
        return SimpleNamespace(logits=self.head(torch.tanh(self.embed(input_ids))))


@pytest.fixture(scope="module")
def process_group():
    import torch.distributed as dist

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    saved = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE")}
    hook = sys.excepthook  # torch's process group replaces it ("[rank0]: " on every later traceback)
    os.environ.update(RANK="1", WORLD_SIZE="1")  # RANK != 0: no progress bars
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()
    sys.excepthook = hook
    for k, v in saved.items():
        os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)


def batch(model):
    from verl.protocol import DataProto

    g = torch.Generator().manual_seed(1)
    n = len(LENGTHS)
    input_ids = torch.randint(0, VOCAB, (n, PROMPT + RESPONSE), generator=g)
    response_mask = torch.tensor([[1] * k + [0] * (RESPONSE - k) for k in LENGTHS])
    attention_mask = torch.cat([torch.ones(n, PROMPT, dtype=torch.long), response_mask], dim=1)
    with torch.no_grad():
        logits = model(input_ids).logits[:, PROMPT - 1 : -1]
        log_probs = torch.log_softmax(logits, -1).gather(-1, input_ids[:, PROMPT:, None]).squeeze(-1)
    tensors = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "position_ids": torch.arange(PROMPT + RESPONSE).expand(n, -1).clone(),
        "responses": input_ids[:, PROMPT:],
        "response_mask": response_mask,
        "old_log_probs": log_probs,
        "ref_log_probs": log_probs,
        "advantages": torch.tensor(ADVANTAGES)[:, None] * response_mask,
    }
    return DataProto.from_dict(
        tensors, {"multi_modal_inputs": np.array([{}] * n, dtype=object)}, meta_info={"temperature": 1.0}
    )


def step(mode, wrapped=True, data=None):
    """Weights moved by one update_policy call (SGD, lr 1): minus the gradient of EasyR1's loss."""
    from verl.workers.actor.config import ActorConfig
    from verl.workers.actor.dp_actor import DataParallelPPOActor

    model = TinyLM()
    before = copy.deepcopy(model.state_dict())
    config = ActorConfig(
        micro_batch_size_per_device_for_update=1,
        loss_avg_mode=mode,
        padding_free=False,
        dynamic_batching=False,
        use_torch_compile=False,
        max_grad_norm=1e9,
    )
    config.global_batch_size_per_device = len(LENGTHS)  # one mini-batch of four, four micro-batches of one
    actor = DataParallelPPOActor(config, model, torch.optim.SGD(model.parameters(), lr=1.0))
    update = DataParallelPPOActor.update_policy
    (update if wrapped else update.__wrapped__)(actor, batch(model) if data is None else data)
    return {k: before[k] - v for k, v in model.state_dict().items()}  # = the gradient


def expected_gradient(weights):
    """∇ of Σ_{i,t} w_{i,t} · (-A_i · ratio_{i,t}) at ratio 1, by autograd on the same model."""
    model = TinyLM()
    data = batch(model)
    ids = data.batch["input_ids"]
    log_probs = (
        torch.log_softmax(model(ids).logits[:, PROMPT - 1 : -1], -1).gather(-1, ids[:, PROMPT:, None]).squeeze(-1)
    )
    ratio = torch.exp(log_probs - log_probs.detach())
    loss = (weights * -torch.tensor(ADVANTAGES)[:, None] * ratio).sum()
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


def close(got, want):
    return all(torch.allclose(got[k], want[k], atol=1e-6, rtol=1e-4) for k in want)


def test_seq_mode_is_equation_2(easyr1_host, process_group):
    mask = torch.tensor([[1.0] * k + [0.0] * (RESPONSE - k) for k in LENGTHS])
    eq2 = mask / torch.tensor(LENGTHS, dtype=torch.float32)[:, None] / len(LENGTHS)  # (1/N) Σ_i (1/|o_i|) Σ_t
    token_mean = mask / mask.sum()  # (1/T) Σ_i Σ_t
    assert close(step("seq"), expected_gradient(eq2))
    assert not close(step("seq"), expected_gradient(token_mean))


def test_easyr1s_own_seq_mode_and_token_mode_are_the_token_mean(easyr1_host, process_group):
    mask = torch.tensor([[1.0] * k + [0.0] * (RESPONSE - k) for k in LENGTHS])
    token_mean = expected_gradient(mask / mask.sum())
    assert close(step("seq", wrapped=False), token_mean)  # EasyR1 alone: one response per micro-batch
    assert close(step("token"), token_mean)  # token mode is left as it is


def test_seq_mode_on_a_locked_batch(easyr1_host, process_group):
    """A batch that reached a worker through Ray's dispatch is a locked TensorDict (seen in `easyr1 train --cpu`):
    seq mode still gives Eq. 2, and the batch is handed back locked, its mask as it was."""
    mask = torch.tensor([[1.0] * k + [0.0] * (RESPONSE - k) for k in LENGTHS])
    eq2 = mask / torch.tensor(LENGTHS, dtype=torch.float32)[:, None] / len(LENGTHS)
    data = batch(TinyLM())
    data.batch.lock_()
    original = data.batch["response_mask"]
    assert close(step("seq", data=data), expected_gradient(eq2))
    assert data.batch.is_locked and data.batch["response_mask"] is original
