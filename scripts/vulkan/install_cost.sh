#!/usr/bin/env bash
# What the real-device tests cost to install (docs/plugins/real-device.md quotes its output):
#   1. Mesa's lavapipe from Debian: removed, then installed again by scripts/vulkan/install.sh (time, MiB);
#   2. torchvulkan from PyPI: the wheel's size, and the time pip takes to download and install it alone.
# Run as root on a machine where nothing else uses the Vulkan drivers right now (it removes them first).
#
#   sudo scripts/vulkan/install_cost.sh [PYTHON]     # PYTHON: the interpreter of the test venv
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${1:-.venv/bin/python}

if dpkg-query -W -f='${Status}' mesa-vulkan-drivers 2>/dev/null | grep -q "install ok installed"; then
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq mesa-vulkan-drivers >/dev/null
fi
bash scripts/vulkan/install.sh

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
start=$(date +%s%N)
"$python" -m pip download -q --no-deps --no-cache-dir -d "$scratch/wheel" -c constraints.txt torchvulkan==0.2.1
"$python" -m pip install -q --no-deps --no-cache-dir --target "$scratch/site" "$scratch"/wheel/*.whl
ms=$(( ($(date +%s%N) - start) / 1000000 ))
wheel=$(du -k "$scratch"/wheel/*.whl | cut -f1)
installed=$(du -sk "$scratch/site" | cut -f1)
echo "torchvulkan: $(basename "$scratch"/wheel/*.whl): wheel $(( wheel / 1024 )).$(( wheel % 1024 * 10 / 1024 )) MiB," \
  "installed $(( installed / 1024 )) MiB, downloaded and installed in $(( ms / 1000 )).$(( ms % 1000 / 100 )) s"
