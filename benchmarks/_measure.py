"""Peak-RSS measurement shared by the benchmark scripts (Linux: /proc/self)."""

from __future__ import annotations

import ctypes
import gc


def _mem() -> tuple[int, int]:
    """(VmRSS, VmHWM) in bytes."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                key, val = line.split(":")
                out[key] = int(val.split()[0]) * 1024
    return out["VmRSS"], out["VmHWM"]


def _reset_peak() -> int:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _mem()[0]
