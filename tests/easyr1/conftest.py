"""EasyR1 host fixtures: the vLLM import shim, plugins active in this process, a synthetic dataset, a recipe,
a real local Ray cluster started the way `python3 -m verl.trainer.main` starts it, and EasyR1's own objects.

The vLLM stand-in (zoomzero_plugin/hosts/easyr1/vllm_stub.py) serves ``import vllm`` only while this package's
tests run, and only where vLLM is not installed (other tests check that vLLM is absent). The
plugins, once active, stay active for the rest of the session: every seam passes through unchanged for configs
that do not use them.
"""

import contextlib
import os
import socket
from pathlib import Path

import pytest

from zoomzero_plugin.hosts.easyr1 import vllm_stub
from zoomzero_plugin.hosts.easyr1.activation import ENV_HOOK, activate

SHIMS = str(Path(__file__).parent / "shims")  # on PYTHONPATH, `import vllm` loads vllm_stub in subprocesses
REPO = Path(__file__).resolve().parents[2]


def subprocess_env(
    stand_in: bool = False, drop: tuple[str, ...] = ("RAY_RUNTIME_ENV_HOOK",), **extra: str
) -> dict[str, str]:
    """This process's environment for a test's subprocess: the user's PYTHONPATH kept (EasyR1 main is tested
    through it) but never the vLLM stand-in, unless ``stand_in`` puts it first; ``drop`` removed, ``extra`` set.
    ``RAY_ADDRESS=local`` unless ``extra`` says otherwise: a Ray the subprocess starts (EasyR1's plain ``ray.init()``)
    is its own, never a cluster already running on the machine (``RAY_ADDRESS``, or the one ``ray start`` left)."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    paths = [p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p and p != SHIMS]
    if stand_in:
        paths.insert(0, SHIMS)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return {**env, "RAY_ADDRESS": "local", **extra}


# Evidence windows stay clear of these spans; the guide uses them as "wrong" predictions.
RECIPE = """\
data:
  train_files: {rows}
  val_files: {rows}
  prompt_key: prompt
  answer_key: answer
  video_key: videos
  max_prompt_length: 2048
  max_response_length: 160
  rollout_batch_size: 2
  val_batch_size: 2
  video_fps: 1.0
  min_pixels: 3136        # coarse pass: small frames; EasyR1's default 262144 would upscale them past max_prompt_length
  max_pixels: 12544
  shuffle: false
  filter_overlong_prompts: false
algorithm:
  adv_estimator: tokenadv
  use_kl_loss: true
worker:
  actor:
    global_batch_size: 2
    micro_batch_size_per_device_for_update: 1
    micro_batch_size_per_device_for_experience: 2
    model:
      model_path: {model}
  rollout:
    n: 2
    tensor_parallel_size: 1
    temperature: 1.0
    val_override_config: {{n: 1, temperature: 0.0}}
  reward:
    reward_type: batch
    reward_function: zoomzero:gvqa
    num_cpus: 0
    reward_function_kwargs:
      components: [format, iou, accuracy, zoom]
      weights: {{format: 1.0, iou: 1.0, accuracy: 1.0, zoom: 1.0}}
      zoom:
        enable: true
        fps: 2.0
        max_visual_tokens: 256
        min_frame_pixels: 3136
        max_frame_pixels: 50176
        max_new_tokens: 4
        no_spans: skip
      tokenadv: {{eps: 1.0e-6}}
trainer:
  total_epochs: 1
  n_gpus_per_node: 1
  logger: [console]
  val_before_train: false
"""


@pytest.fixture(scope="package", autouse=True)
def easyr1_host():
    """The package's vLLM stand-in (where vLLM is not installed) and the plugins active, for this package's tests."""
    stand_in = vllm_stub.install()
    activate("pytest")
    yield stand_in
    if stand_in:
        vllm_stub.uninstall()


@pytest.fixture(scope="package")
def easyr1_model_dir(easyr1_host, tiny_model_dir, tmp_path_factory):
    """The tiny Qwen2.5-VL with the video processor bounds of the released Qwen2.5-VL (min 3136 pixels/frame).

    The core fixture keeps transformers' defaults (min 100352), which would upscale every small frame.
    """
    from .helpers import model_with_sizes

    dest = tmp_path_factory.mktemp("easyr1-model")
    return model_with_sizes(tiny_model_dir, dest, "video_preprocessor_config.json", 3136, 602112)


@pytest.fixture(scope="package")
def easyr1_tokenizer(easyr1_model_dir):
    from verl.utils.tokenizer import get_tokenizer

    return get_tokenizer(str(easyr1_model_dir), use_fast=True)


@pytest.fixture(scope="package")
def easyr1_processor(easyr1_model_dir):
    from verl.utils.tokenizer import get_processor

    return get_processor(str(easyr1_model_dir), use_fast=True)


@pytest.fixture(scope="package")
def benchmark_rows(tmp_path_factory):
    """Two synthetic videos (12 s, one coloured square each) and their rows, written by make_benchmark."""
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=2, seed=3)


@pytest.fixture(scope="package")
def recipe_path(benchmark_rows, easyr1_model_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("recipe") / "zoomzero_test.yaml"
    path.write_text(RECIPE.format(rows=benchmark_rows, model=easyr1_model_dir))
    return path


@pytest.fixture
def ppo_config(recipe_path):
    """EasyR1's PPOConfig of the test recipe (fresh per test: trainers mutate it)."""
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    return load_recipe(recipe_path)[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def agent_port(port: int):
    """Ray's dashboard agent (the one that runs `ray job submit`'s jobs) listens on port 52365 whatever ``ray.init``
    is given (``ray start --dashboard-agent-listen-port`` is the only way to choose it). Where another Ray on the
    machine holds that port (a test suite running beside this one), the agent logs "address already in use",
    disables its HTTP service and never registers, and every job submission answers "No available agent". While
    this is open, the Ray started in this process gets ``port`` instead; nothing else changes."""
    from ray._private.parameter import RayParams

    init = RayParams.__init__

    def with_agent_port(self, *args, **kwargs):
        kwargs.setdefault("dashboard_agent_listen_port", port)
        init(self, *args, **kwargs)

    RayParams.__init__ = with_agent_port
    try:
        yield
    finally:
        RayParams.__init__ = init


@pytest.fixture(scope="package")
def ray_cluster(easyr1_host):
    """A real local Ray of this test session's own, started like EasyR1 starts it (``ray.init(runtime_env=…)`` with
    RAY_RUNTIME_ENV_HOOK exported), on ports and a temp dir of its own: ``address="local"`` starts a new one whatever
    runs on the machine (a plain ``ray.init()`` would attach to ``RAY_ADDRESS`` or to the cluster ``ray start`` left);
    the dashboard and its job agent get free ports (not 8265 and 52365, where another Ray may listen); and its temp dir
    names its own address as the current cluster, since a submitted job's driver is sent to the cluster its
    supervisor finds there (without one, to any Ray running on the machine).

    Yields the dashboard's address (it serves `ray job submit`)."""
    import shutil
    import tempfile

    import ray
    from ray._private import utils as ray_utils, worker

    saved = {k: os.environ.get(k) for k in ("RAY_RUNTIME_ENV_HOOK", "PYTHONPATH")}
    os.environ["RAY_RUNTIME_ENV_HOOK"] = ENV_HOOK
    shims = SHIMS if easyr1_host else None  # the stand-in for vLLM, where it is not installed
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (shims, saved["PYTHONPATH"]) if p
    )  # not the repo: workers must find it installed
    dashboard, temp_dir = free_port(), tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's sockets live there
    with agent_port(free_port()):
        context = ray.init(
            address="local",
            num_cpus=4,
            include_dashboard=True,
            dashboard_port=dashboard,
            log_to_driver=False,
            runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
            _temp_dir=temp_dir,
        )
    assert worker._global_node.head and context.dashboard_url.endswith(f":{dashboard}"), "not the Ray this test started"
    ray_utils.write_ray_address(context.address_info["gcs_address"], temp_dir)  # what `ray start` writes
    yield f"http://{context.dashboard_url}"
    ray.shutdown()
    shutil.rmtree(temp_dir, ignore_errors=True)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
