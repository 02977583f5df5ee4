"""The reflection teacher's system prompt is the authors' string, byte for byte."""

import json
from pathlib import Path

from zoomzero_plugin.agent.prompts import REFLECTION_SYSTEM

AUTHORS = json.loads((Path(__file__).parent / "fixtures" / "reflection_prompt.json").read_text(encoding="utf-8"))


def test_reflection_prompt_is_the_authors():
    assert REFLECTION_SYSTEM == AUTHORS["reflection"]
    assert "\\boxed{correct answer}" in REFLECTION_SYSTEM and "\\\\boxed" not in REFLECTION_SYSTEM
