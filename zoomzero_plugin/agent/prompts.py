"""What the agent's model reads: the VideoZoomer authors' strings, as three named variants.

The released checkpoint learned exactly these texts, so they are kept byte for byte, typos included
("Countinue", a missing comma, the execution error's unclosed ``<tool_response>``):

- ``train``: the RL system prompt (``scripts/train_video.sh``) as Hydra hands it to the model: the shell's
  ``\\n`` reaches the model as a backslash and an ``n``, not a newline.
- ``eval``: the evaluation system prompt (``scripts/eval_video.sh``): asks for the answer in ``\\boxed{}``
  inside ``<answer>``, and through Hydra the model reads ``\\\\boxed{{}}`` (two backslashes, double braces).
- ``sft``: the teacher prompt that generated the cold-start SFT data (``scripts/video_eval/tool_call_infer.py``):
  real newlines, ``\\boxed{{}}``, an unfilled ``{}``, and its own observation wording (no ``<tool_response>``
  around clips, as that script sent them to an OpenAI-style API).

``reflection``: ``REFLECTION_SYSTEM``, the system prompt of the authors' reflection teacher
(``scripts/video_eval/reflection.py``), which corrects a failed trajectory for the SFT data.

``train`` and ``eval`` share the rollout's observation texts (``vllm_async_engine.py``); ``sft`` has its own.
A frame is shown as its label ``<frame{i}_time{t:.2f}s>`` followed by the image; labels restart at 0 in every
observation, times are absolute seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..question import VIDEO_PLACEHOLDER, question_block

_SYSTEM_HEAD = (
    "You are a helpful assistant. You will receive a low-frame-rate video and related questions. You can analyze "
    "the video content to answer the question and trigger high-frame-rate inspections when finer temporal "
    "resolution is needed. When you detect ambiguous motion/objects that require closer inspection, wrap your "
    "request in <video_zoom></video_zoom> tags and provide the exact time segment and target frame rate in JSON "
    'format: <video_zoom> {"segment": [start_sec, end_sec], "fps": n} </video_zoom>, it will return the video clip '
    "at the target fps to help you better answer the question. Note that the total frames num of the request clip "
    "cannot exceed "
)
_EXAMPLE = 'Example usage: <video_zoom> {"segment": [4.0, 6.0], "fps": 2} </video_zoom>.'
_CONTINUE = (
    "you may continue to request additional video zoom inspections as needed, until you either (1) gather enough "
    "information to form a complete answer, or (2) are explicitly instructed to stop using the tool."
)
_LIMIT = "16 (e.g., (end_sec - start_sec) * fps ≤ 16) and DO NOT include <answer> tags in this round. "

TRAIN_SYSTEM = (
    _SYSTEM_HEAD + _LIMIT + "\\n " + _EXAMPLE + " If the initial tool response does not provide sufficient "
    "information to answer the question, " + _CONTINUE + " Output the thinking process within <think> </think> "
    "tags, once you confirm your final answer place the final answer inside <answer> and </answer>."
)
EVAL_SYSTEM = (
    _SYSTEM_HEAD + _LIMIT + "\\n " + _EXAMPLE + " If the initial tool response does not provide sufficient "
    "information to answer the question, " + _CONTINUE + " Output the thinking process within <think> </think> "
    "tags, once you confirm your final answer, place the final answer in \\\\boxed{{}} inside <answer> and </answer>."
)
SFT_SYSTEM = (
    _SYSTEM_HEAD
    + "{} (e.g., (end_sec - start_sec) * fps ≤ 16) and DO NOT include <answer> tags in this round. \n "
    + _EXAMPLE
    + "\n\nIf the initial tool response doesn't provide sufficient information to answer the question, "
    + _CONTINUE
    + "\n Output the thinking process within <think> </think> tags, once you confirm your final answer, "
    "place the final answer in \\boxed{{}} inside <answer> and </answer>."
)


# The reflection teacher's system prompt (``scripts/video_eval/reflection.py``): a teacher reads a failed
# trajectory and corrects it with a new call and an answer; its turns extend the failed one for SFT.
REFLECTION_SYSTEM = (
    "You are an expert video understanding model with access to a video zoom tool that allows you to request high-frame-rate clips for temporal inspection. Your task is to correct a flawed analysis of a low-frame-rate video by using a `video_zoom` tool.\n"
    "Your workflow is a multi-turn process:\n"
    "**Turn 1: Reflection and Tool Call**\n"
    "1.  **Analyze the Error**: You will be given a question, choices, and a previous, incorrect attempt. First, you must reflect on *why* the previous `video_zoom` tool call was flawed. Was the time segment wrong? Was the frames-per-second (fps) too low? Was the focus of the analysis misaligned with the question?\n"
    "2.  **Formulate a Correction**: Based on your analysis, decide on a new, corrected `video_zoom` request. This request should target the precise moment of interest and use an appropriate fps to capture the fine-grained detail.\n"
    "3.  **Output the Tool Call**: Generate your reflection and the new tool call in the specified format. **Your output for this turn MUST end immediately after the `</video_zoom>` tag.** Do not generate anything further. The system will then execute this call and provide you with the result.\n"
    "**Constraint for the tool call**: The total number of frames requested must not exceed 16. That is: `(end_sec - start_sec) * fps <= 16`.\n"
    "**Turn 2: Analysis and Final Answer**\n"
    "1.  **Receive Tool Response**: The system will provide the high-frame-rate video clip from your corrected tool call.\n"
    "2.  **Analyze the New Clip**: Carefully examine the new clip. Describe what you can now clearly see that resolves the question.\n"
    "3.  **Provide the Final Answer**: Based on your new observation, state the correct answer from the choices, enclosed in `\boxed{}`.\n"
    "---\n"
    "**Output Format Structure:**\n"
    "**FIRST TURN OUTPUT:**\n"
    "<think>\n"
    "The previous tool call was incorrect because [explain the flaw in the tool use, e.g., wrong segment, wrong fps, or misaligned focus].\n"
    "Now I will zoom in to inspect the motion of '{target object/action}' between {start_sec}s and {end_sec}s with higher temporal resolution.\n"
    '</think><video_zoom> {"segment": [start_sec, end_sec], "fps": n} </video_zoom>\n'
    "**[YOUR TURN 1 OUTPUT STOPS HERE]**\n"
    "---\n"
    "**SECOND TURN OUTPUT (after you receive the tool response):**\n"
    "<think>\n"
    "In the corrected high-frame-rate clip, [describe what is clearly observed now].\n"
    "</think>\n"
    "<answer>\n"
    "\\boxed{correct answer}\n"
    "</answer>\n"
    "---\n"
    "**Example to follow:**\n"
    "**Question:** Which hand did the woman use to pick up the cup?\n"
    "**Choices:** A: Left hand B: Right hand C: Both hands D: Neither\n"
    "**Previous Trajectory (Wrong):**\n"
    'Tool call: `<video_zoom> {"segment": [0.0, 2.0], "fps": 2}</video_zoom>`\n'
    "Answer: A (Left hand)\n"
    "**(Your First Turn Output Should Look Like This):**\n"
    "<think>\n"
    "The previous tool call was incorrect because it focused on the wrong time segment. The woman only reaches for the cup between 3.0s and 5.0s. Additionally, the low fps of 2 might not be sufficient to clearly distinguish the hand's motion.\n"
    "Now I will zoom in to inspect the motion of 'the woman's hand reaching for the cup' between 3.0s and 5.0s with a higher temporal resolution.\n"
    '</think><video_zoom> {"segment": [3.0, 10.0], "fps": 1} </video_zoom>\n'
    "**(System provides tool response, then you start your Second Turn)**\n"
    "**(Your Second Turn Output Should Look Like This):**\n"
    "<think>\n"
    "In the corrected high-frame-rate clip, the woman's right hand is clearly seen moving towards and gripping the cup handle between 4.1s and 4.8s, while her left hand remains on her lap. The motion is now unambiguous.\n"
    "</think>\n"
    "<answer>\n"
    "B.\n"
    "</answer>"
)

LAST_ROUND = "Do not call <video_zoom> in this round, give a final answer based on information above."
CLIP_HEADER = "The frames of the video clip are shown below:\n"  # every variant's clip observation holds it
_GO_ON = (
    "continue your reasoning process inside <think> and </think> and then write your final answer inside "
    "<answer> and </answer>"
)
_ANALYZE = (
    "Please analyze the error information obtained from the function tool and adjust your response. "
    "Countinue your reasoning process inside <think> and </think>"
)
MESSAGE = "{message}"  # where an error's message goes in the error templates


@dataclass(frozen=True)
class PromptSet:
    """One variant's texts. An observation is ``clip_open`` + labelled frames + ``clip_close``, or an error
    template with ``{message}`` filled in; after the turn before the last, ``last_round`` is appended to it
    (no separator, as released)."""

    name: str
    system: str
    clip_open: str
    clip_close: str
    parse_error: str  # the call could not be read
    execution_error: str  # the call was read but returned no frames
    last_round: str = LAST_ROUND

    def error_text(self, kind: str, message: str) -> str:
        template = self.parse_error if kind == "parse" else self.execution_error
        return template.replace(MESSAGE, message)


PROMPTS: dict[str, PromptSet] = {
    "train": PromptSet(
        "train",
        TRAIN_SYSTEM,
        clip_open="<tool_response>\n" + CLIP_HEADER,
        clip_close="\n</tool_response>\n" + _GO_ON,
        parse_error="<tool_response>\nERROR occurs during the function tool call. Error Information: {message}.\n"
        "</tool_response>\n" + _ANALYZE + ".",
        execution_error="<tool_response>\nError: {message}<tool_response>" + _ANALYZE + ".",
    ),
    "sft": PromptSet(
        "sft",
        SFT_SYSTEM,
        clip_open=CLIP_HEADER,
        clip_close=_GO_ON + ".",
        parse_error="\nERROR occurs during the function tool call. Error Information: {message}.\n"
        + _ANALYZE
        + " and then write your final answer inside <answer> and </answer>.",
        execution_error="<tool_response>\nError: {message}<tool_response>"
        + _ANALYZE
        + " and then write your final answer inside <answer> and </answer>.",
    ),
}
PROMPTS["eval"] = PromptSet(
    "eval",
    EVAL_SYSTEM,
    **{k: getattr(PROMPTS["train"], k) for k in ("clip_open", "clip_close", "parse_error", "execution_error")},
)
DEFAULT_PROMPT = "eval"  # what the released checkpoint was evaluated with


def get_prompts(name: str) -> PromptSet:
    if name not in PROMPTS:
        raise ValueError(f"unknown agent prompt variant {name!r}; choose from {', '.join(sorted(PROMPTS))}")
    return PROMPTS[name]


def frame_label(index: int, seconds: float) -> str:
    """``<frame{index}_time{seconds:.2f}s>``, the text before each frame's image."""
    return f"<frame{index}_time{seconds:.2f}s>"


def clip_label(first: float, last: float) -> str:
    """``<clip_time{first:.2f}s-{last:.2f}s>`` and a newline, the text before a clip shown as one video (``clip_as:
    video``): the absolute times of its first and last frame. (This package's own label: the authors' checkpoints
    saw images.) The newline ends the label's last token, so a model that writes each frame's time before it
    (Qwen3-VL's ``<2.2 seconds>``) starts that text with a token of its own, whether the prompt is tokenized whole
    (transformers) or the video's tokens are spliced into token ids (vLLM)."""
    return f"<clip_time{first:.2f}s-{last:.2f}s>\n"


def question_text(question: str, options: Sequence[str]) -> str:
    """The first user turn's text: ``<video>`` (replaced by the labelled overview frames) then the question
    and its ``(A) …`` options. The authors' question wording is not in their code; this is the one every mode
    of this package uses."""
    return f"{VIDEO_PLACEHOLDER}{question_block(question, options)}"
