"""Start-up hook for the `llamafactory-cli` subprocesses of these tests (on PYTHONPATH only there).

On this CPU test machine torchvision and torchaudio are CUDA builds; LLaMA-Factory imports both at start.
A venv-wide .pth hook from scripts/install-cpu.sh does the same where it exists; this keeps the tests
independent of it. Both calls are no-ops where the compiled libraries load.
"""

from zoomzero_plugin.cpu_compat import ensure_torchaudio_importable, ensure_torchvision_importable

ensure_torchaudio_importable()
ensure_torchvision_importable()
