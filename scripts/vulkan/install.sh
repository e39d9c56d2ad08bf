#!/usr/bin/env bash
# Install Mesa's Vulkan drivers (lavapipe, a Vulkan device that runs on the CPU) from Debian's packages, so the
# test suite can train on a real out-of-tree PyTorch device: torchvulkan's `vulkan` (tests/real_device/).
# torchvulkan itself is a Python package and comes with the `test` extra.
#
# Idempotent: when lavapipe's ICD file is already there it does nothing and exits 0.
# Needs root and apt-get (a Debian or Ubuntu machine or container, as in CI).
#
#   sudo scripts/vulkan/install.sh        # or as root in CI
#
# Exit codes: 0 installed (or already there), 2 this machine cannot install it (not root, no apt-get),
# anything else: apt-get failed (its output says why). The last line says what it took (seconds, MiB).
set -euo pipefail

icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [ -e "$icd" ]; then
  echo "lavapipe: already installed (mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo unknown))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "lavapipe: $icd is missing; installing mesa-vulkan-drivers needs root (run: sudo $0)" >&2
  exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "lavapipe: $icd is missing; this script installs Debian's mesa-vulkan-drivers and needs apt-get" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s%N)
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
  apt-get update -qq
fi
if ! apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kib=$(dpkg-query -W -f='${Installed-Size}\n' mesa-vulkan-drivers libvulkan1 | awk '{ s += $1 } END { print s }')
echo "lavapipe: installed mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers) in" \
  "$(( ms / 1000 )).$(( ms % 1000 / 100 )) s ($(( kib / 1024 )) MiB installed with libvulkan1)"
