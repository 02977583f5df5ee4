"""Group-normalised advantages: TokenAdv (Zoom-Zero Eq. 4–5) and the plain GRPO baseline.

A group is the set of responses sharing a prompt uid (EasyR1's ``index``). Statistics are computed for
all groups at once with scatter operations: no per-response Python loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

GLUE_COMPONENTS = ("format", "zoom", "iou")
ANSWER_COMPONENTS = ("format", "zoom", "accuracy")
STD_KINDS = ("population", "sample")  # divide the squared deviations by n, or by n - 1 (torch.std, EasyR1's grpo)


def group_ids(index: Any) -> tuple[torch.Tensor, int]:
    """Map group labels (uids: strings, ints, a tensor) to ``0..G-1``. Returns (ids (bs,), G)."""
    if isinstance(index, torch.Tensor):
        index = index.detach().cpu().numpy()
    _, inverse = np.unique(np.asarray(index), return_inverse=True)
    inverse = torch.as_tensor(inverse.reshape(-1), dtype=torch.long)
    return inverse, int(inverse.max()) + 1 if inverse.numel() else 0


def group_normalize(scores: torch.Tensor, index: Any, eps: float = 1e-6, std: str = "population") -> torch.Tensor:
    """(r − mean_group) / (std_group + eps) per column.

    Args:
        scores: (bs,) or (bs, K) rewards.
        index: (bs,) group labels.
        std: ``population`` (squared deviations / n; the paper's Table 8) or ``sample`` (/ (n − 1)).
    Returns:
        Same shape as ``scores``, float32. A group whose values are all equal (a group of one included)
        gives exactly 0.
    """
    if std not in STD_KINDS:
        raise ValueError(f"std must be one of {STD_KINDS}, got {std!r}")
    squeeze = scores.dim() == 1
    x = (scores[:, None] if squeeze else scores).detach().to(torch.float64).cpu()
    ids, n_groups = group_ids(index)
    if ids.numel() != x.shape[0]:
        raise ValueError(f"index has {ids.numel()} labels for {x.shape[0]} responses")
    count = torch.bincount(ids, minlength=n_groups).to(torch.float64)[:, None]
    mean = torch.zeros(n_groups, x.shape[1], dtype=torch.float64).index_add_(0, ids, x) / count
    dev = x - mean[ids]
    denominator = (count - 1).clamp(min=1) if std == "sample" else count
    spread = (torch.zeros_like(mean).index_add_(0, ids, dev * dev) / denominator).sqrt()
    expand = ids[:, None].expand_as(x)
    hi = torch.full_like(mean, -torch.inf).scatter_reduce_(0, expand, x, "amax")
    lo = torch.full_like(mean, torch.inf).scatter_reduce_(0, expand, x, "amin")
    constant = (hi == lo)[ids]
    out = torch.where(constant, torch.zeros_like(dev), dev / (spread[ids] + eps)).to(torch.float32)
    return out[:, 0] if squeeze else out


def token_adv(
    components: Mapping[str, torch.Tensor],
    glue_mask: torch.Tensor,
    response_mask: torch.Tensor,
    index: Any,
    eps: float = 1e-6,
    glue_components: Sequence[str] = GLUE_COMPONENTS,
    answer_components: Sequence[str] = ANSWER_COMPONENTS,
    std: str = "population",
) -> tuple[torch.Tensor, torch.Tensor]:
    """TokenAdv: grounding tokens learn from grounding rewards, the rest from answer rewards.

    Args:
        components: name → (bs,) reward of each enabled component; switched-off components are absent
            and drop out of the means.
        glue_mask: (bs, L) bool, True for tokens inside ``<glue>…</glue>`` (tags included).
        response_mask: (bs, L) 1 for generated tokens, 0 for padding.
        index: (bs,) group labels (prompt uids).
        std: group standard deviation, ``population`` or ``sample`` (:func:`group_normalize`).
    Returns:
        (advantages, returns), both (bs, L) float32; padding is 0.
    """
    names = list(components)
    glue_cols = [names.index(k) for k in glue_components if k in components]
    answer_cols = [names.index(k) for k in answer_components if k in components]
    if not glue_cols or not answer_cols:
        raise ValueError(
            f"TokenAdv needs at least one of {tuple(glue_components)} for glue tokens and one of "
            f"{tuple(answer_components)} for the other tokens; got components {names}"
        )
    stacked = torch.stack([torch.as_tensor(components[k], dtype=torch.float32).reshape(-1) for k in names], dim=1)
    adv = group_normalize(stacked, index, eps, std)  # (bs, K)
    a_glue, a_answer = adv[:, glue_cols].mean(1), adv[:, answer_cols].mean(1)
    device = response_mask.device
    per_token = torch.where(glue_mask.bool().to(device), a_glue.to(device)[:, None], a_answer.to(device)[:, None])
    out = per_token * response_mask.to(per_token.dtype)
    return out, out


def grpo_advantage(
    scores: torch.Tensor, response_mask: torch.Tensor, index: Any, eps: float = 1e-6, std: str = "population"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain GRPO on one summed reward per response, broadcast over its tokens.

    Args:
        scores: (bs,) overall reward. response_mask: (bs, L). index: (bs,) group labels.
        std: group standard deviation, ``population`` (default, as TokenAdv) or ``sample`` (EasyR1's ``grpo``).
    Returns:
        (advantages, returns), both (bs, L) float32.
    """
    adv = group_normalize(scores.reshape(-1), index, eps, std).to(response_mask.device)
    out = adv[:, None] * response_mask.to(adv.dtype)
    return out, out
