"""Plugins are active in every Ray worker before any actor code runs, with EasyR1's own plain ray.init().

The session's Ray was started like ``python3 -m verl.trainer.main`` starts it: ``ray.init(runtime_env=…)``
with only ``RAY_RUNTIME_ENV_HOOK`` exported (tests/easyr1/conftest.py).
"""

import os
import sys
import time
import types
from dataclasses import asdict
from pathlib import Path

import pytest
import ray
from ray.runtime_env.runtime_env import _merge_runtime_env

from zoomzero_plugin.hosts.easyr1 import activation
from zoomzero_plugin.hosts.easyr1.activation import ENV_HOOK, SETUP_HOOK, runtime_env, with_setup_hook

from .conftest import REPO

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import the tests package


class Probe:
    """An actor that reports what it found in its own process."""

    def __init__(self):
        self.started = time.time()  # the first line of the actor's own code
        self.record = activation.activation()

    def report(self, import_trainer: bool = False) -> dict:
        import verl.utils.dataset  # noqa: F401 - importing applies the seams if the plugins are active
        import verl.workers.reward.function  # noqa: F401

        import zoomzero_plugin
        from zoomzero_plugin.hosts.easyr1 import seams

        out = {"pid": os.getpid(), "started": self.started, "package": zoomzero_plugin.__file__}
        out["activation"] = asdict(self.record) if self.record else None
        if import_trainer:
            import verl.trainer.ray_trainer as trainer

            out["compute_advantage"] = getattr(trainer.compute_advantage, seams.MARK, None)
        out["seams"] = {s.name: seams.status(s)[0] for s in seams.SEAMS}
        return out

    def nested_report(self) -> dict:
        inner = ray.remote(num_cpus=0)(Probe).remote()
        return ray.get(inner.report.remote())


def assert_active_before_code(report: dict) -> None:
    record = report["activation"]
    assert record is not None, "plugins not active in the actor's process"
    assert record["pid"] == report["pid"] and record["where"] == "ray worker"
    assert record["time"] <= report["started"], "activation must precede the actor's __init__"
    assert "zoomzero" in record["plugins"]
    assert report["package"].startswith(str(REPO)), f"worker imported {report['package']}, not this worktree"
    for name in ("dataset.process_video", "reward_manager.compute_reward", "reward_manager.__init__"):
        assert report["seams"][name] == "patched", (name, report["seams"])


def test_plain_ray_init_carries_the_setup_hook_into_actors_and_nested_actors(ray_cluster):
    assert ray.get_runtime_context().runtime_env.get("worker_process_setup_hook") == SETUP_HOOK
    outer = ray.remote(num_cpus=0)(Probe).remote()
    report = ray.get(outer.report.remote(import_trainer=True))
    assert_active_before_code(report)
    assert report["compute_advantage"] == "ray_trainer.compute_advantage"
    assert report["seams"]["ray_trainer.RayPPOTrainer.__init__"] == "patched"
    nested = ray.get(outer.nested_report.remote())
    assert nested["pid"] != report["pid"]
    assert_active_before_code(nested)


def test_runtime_env_json_merges_with_easyr1s_own_runtime_env():
    """`ray job submit --runtime-env-json "$(easyr1 runtime-env)"`: Ray merges it with EasyR1's ray.init env."""
    easyr1_env = {"env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN", "PYTHONUNBUFFERED": "1"}}
    merged = _merge_runtime_env(runtime_env(), easyr1_env)  # what ray.init does in a job's driver
    assert merged is not None, "a conflict would make EasyR1's ray.init fail inside `ray job submit`"
    assert merged["worker_process_setup_hook"] == SETUP_HOOK
    assert merged["env_vars"]["RAY_RUNTIME_ENV_HOOK"] == ENV_HOOK and merged["env_vars"]["NCCL_DEBUG"] == "WARN"
    assert with_setup_hook(merged)["worker_process_setup_hook"] == SETUP_HOOK


def test_a_users_own_setup_hook_is_chained(monkeypatch):
    calls = []
    module = types.ModuleType("user_setup_module")
    module.setup = lambda: calls.append(os.getpid())
    monkeypatch.setitem(sys.modules, "user_setup_module", module)
    env = with_setup_hook({"worker_process_setup_hook": "user_setup_module.setup", "env_vars": {"A": "1"}})
    assert env["worker_process_setup_hook"] == SETUP_HOOK and env["env_vars"]["A"] == "1"
    monkeypatch.setenv(activation.CHAINED_HOOK_ENV, env["env_vars"][activation.CHAINED_HOOK_ENV])
    activation.setup_worker()
    assert calls == [os.getpid()]
    with pytest.raises(ValueError, match="callable"):
        with_setup_hook({"worker_process_setup_hook": print})


JOB = """
import os, ray
ray.init(runtime_env={"env_vars": {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN"}})  # as EasyR1's main
from zoomzero_plugin.hosts.easyr1 import activation
@ray.remote(num_cpus=0)
def probe():
    record = activation.activation()
    return record.where if record else None, os.environ.get("NCCL_DEBUG")
print("DRIVER", activation.activation().where)
print("WORKER", ray.get(probe.remote()))
print("CLUSTER", ray.get_runtime_context().gcs_address)
"""


def test_ray_job_submit_with_the_runtime_env_json(ray_cluster, tmp_path, monkeypatch):
    """Launch path 3: `ray job submit --runtime-env-json "$(easyr1 runtime-env)" -- <EasyR1-like driver>`, to the
    dashboard of the cluster this test session started (its own port: never a Ray already listening on 8265)."""
    from ray.job_submission import JobStatus, JobSubmissionClient

    for name in ("RAY_API_SERVER_ADDRESS", "RAY_ADDRESS"):  # either would override the address the client is given
        monkeypatch.delenv(name, raising=False)
    entry = tmp_path / "entry.py"
    entry.write_text(JOB)
    client = JobSubmissionClient(ray_cluster)
    job = submit_when_the_agent_is_up(client, entrypoint=f"{sys.executable} {entry}", runtime_env=runtime_env())
    deadline = time.time() + 300
    while client.get_job_status(job) not in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED):
        assert time.time() < deadline, f"job did not finish in 300 s: {client.get_job_logs(job)[-2000:]}"
        time.sleep(0.5)
    logs = client.get_job_logs(job)
    assert client.get_job_status(job) == JobStatus.SUCCEEDED, logs
    assert "DRIVER driver (RAY_RUNTIME_ENV_HOOK)" in logs, "the job's driver must get the hook through env_vars"
    assert "WORKER ('ray worker', 'WARN')" in logs, "workers: plugins active and EasyR1's own env vars kept"
    ours = ray.get_runtime_context().gcs_address  # the cluster the fixture started, on its own ports
    assert f"CLUSTER {ours}" in logs.splitlines(), "the job must run in the cluster this test started"


def submit_when_the_agent_is_up(client, timeout: float = 180, **job) -> str:
    """Submit once the job agent has registered. The dashboard agent registers a while after ray.init (its HTTP
    service starts after its modules load: tens of seconds on a loaded machine); until then the job head waits
    10 s per request and answers "No available agent". Any other error, or no agent after ``timeout``, fails at
    once, naming the agent's own last error (the fixture gives it a free port: a port taken is not the cause)."""
    deadline = time.time() + timeout
    while True:
        try:
            return client.submit_job(**job)
        except RuntimeError as e:
            if "No available agent" not in str(e):
                raise
            if time.time() > deadline:
                raise AssertionError(f"no job agent after {timeout:.0f} s; its log says: {agent_errors()}") from e
            time.sleep(1)


def agent_errors() -> str:
    """The ERROR lines of this session's dashboard agent log, or why there are none."""
    from ray._private.worker import _global_node

    log = Path(_global_node.get_logs_dir_path()) / "dashboard_agent.log"
    if not log.is_file():
        return f"no {log}"
    errors = [line for line in log.read_text(errors="replace").splitlines() if " ERROR " in line]
    return " | ".join(errors[-3:]) or f"no ERROR line in {log}"
