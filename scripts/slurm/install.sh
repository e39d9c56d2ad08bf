#!/usr/bin/env bash
# Install Slurm (slurmctld, slurmd, the client commands) and MUNGE from Debian's packages, so the
# test suite can start a one-node cluster (tests/clusters/slurm_cluster.py).
#
# Idempotent: when every command the tests use is already on PATH it does nothing and exits 0.
# Needs root and apt-get (a Debian or Ubuntu machine or container, as in CI). The packages' own
# services are not started: the tests start munged, slurmctld and slurmd themselves with a generated
# configuration, and stop them again.
#
#   sudo scripts/slurm/install.sh        # or as root in CI
#
# Exit codes: 0 installed (or already there), 2 this machine cannot install it (not root, no apt-get),
# anything else: apt-get failed (its output says why).
set -euo pipefail

needed=(munged mungekey slurmctld slurmd srun sbatch sinfo scontrol squeue scancel)

missing=()
for cmd in "${needed[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$cmd")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "slurm: already installed (slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm 2>/dev/null || echo unknown))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "slurm: missing ${missing[*]}; installing them needs root (run: sudo $0)" >&2
  exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "slurm: missing ${missing[*]}; this script installs Debian's packages and needs apt-get" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
# Refresh the package lists only when they are missing (a fresh container) or an install fails on them.
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
  apt-get update -qq
fi
# The packages' maintainer scripts must not start munge or the Slurm daemons (the tests start them
# with their own configuration): where no policy-rc.d forbids it already, one does for this run.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
if ! apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
echo "slurm: installed slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm) and munge $(dpkg-query -W -f='${Version}' munge) in $(( $(date +%s) - start )) s"
