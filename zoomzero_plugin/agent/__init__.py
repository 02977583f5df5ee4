"""VideoZoomer's ``<video_zoom>`` agent, host-free. One implementation serves agent evaluation, SFT export and the RL
rollout:

- :mod:`.protocol` (one turn: a call, an answer, or neither), :mod:`.budget` (what a trajectory may see and say),
  :mod:`.environment` (the state machine), :mod:`.prompts` (the authors' strings), :mod:`.frames` (decoding the frames
  a trajectory names), :mod:`.clips` (a clip as one video), :mod:`.render` (a trajectory as model inputs and back),
  :mod:`.transcript` (its JSON record);
- :mod:`.reward` (one trajectory's reward) and :mod:`.videozoomer_reward` (the EasyR1 reward file,
  ``zoomzero:videozoomer``); :mod:`.baseline` (the authors' no-tool baseline).

Never imports EasyR1, Ray or vLLM; decord and PIL are imported by :mod:`.frames` only when frames are read.
"""

from .budget import AgentBudget
from .environment import (
    END_ANSWER,
    END_LAST_ROUND_CALL,
    END_NO_ANSWER,
    END_TOTAL_TOKENS,
    Frame,
    Observation,
    Step,
    Trajectory,
    VideoInfo,
    clip_indices,
    overview_indices,
)
from .prompts import DEFAULT_PROMPT, PROMPTS, PromptSet, frame_label, get_prompts, question_text
from .protocol import Call, ToolError, Turn, parse_turn
from .render import chat_messages, first_prompt, prompt_text, response_text, split_response
from .reward import AgentRewardConfig, score_response, score_turns
from .transcript import Transcript, TurnRecord

__all__ = [
    "DEFAULT_PROMPT",
    "END_ANSWER",
    "END_LAST_ROUND_CALL",
    "END_NO_ANSWER",
    "END_TOTAL_TOKENS",
    "PROMPTS",
    "AgentBudget",
    "AgentRewardConfig",
    "Call",
    "Frame",
    "Observation",
    "PromptSet",
    "Step",
    "ToolError",
    "Trajectory",
    "Transcript",
    "Turn",
    "TurnRecord",
    "VideoInfo",
    "chat_messages",
    "clip_indices",
    "first_prompt",
    "frame_label",
    "get_prompts",
    "overview_indices",
    "parse_turn",
    "prompt_text",
    "question_text",
    "response_text",
    "score_response",
    "score_turns",
    "split_response",
]
