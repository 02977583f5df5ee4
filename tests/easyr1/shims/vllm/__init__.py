"""Test-only: on ``PYTHONPATH`` of a test's subprocesses (Ray workers, ``python3 -m verl.trainer.main``) where
vLLM is not installed, ``import vllm`` loads the package's own stand-in (zoomzero_plugin/hosts/easyr1/vllm_stub.py),
the one vLLM stub of every test. In the test process itself, tests/easyr1/conftest.py installs it directly.
"""

import importlib
import sys

from zoomzero_plugin.hosts.easyr1 import vllm_stub

del sys.modules[__name__]  # this file steps aside: the stand-in's finder serves vllm and every vllm.<sub>
vllm_stub.install(force=True)
sys.modules[__name__] = importlib.import_module(__name__)
