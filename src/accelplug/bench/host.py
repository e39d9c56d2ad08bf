"""Facts about the host CPU for the benchmark's labels."""

from __future__ import annotations

import platform
import subprocess

__all__ = ["cpu_model"]


def cpu_model() -> str | None:
    """The CPU's marketing name (Linux /proc/cpuinfo, macOS sysctl), None when it cannot be read."""
    if platform.system() == "Darwin":
        try:
            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=5
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() or None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None
