"""Which of this CPU's vector instructions the embedded server's llama.cpp was compiled to use.

PyPI's xllamacpp wheel is compiled for AVX2 so that it runs on any x86-64 CPU of the last decade; on a CPU with
AVX-512 (and its VNNI and BF16 extensions) a build for that CPU (``make native``) reads prompts about 30% faster
(docs/performance.md). The Settings page says which build is serving and what a native one would add.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

# llama.cpp's names in its system info line → the Linux /proc/cpuinfo flag of the same instructions.
FLAGS = {
    "AVX2": "avx2",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AVX_VNNI": "avx_vnni",
    "AMX_INT8": "amx_int8",
}
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class CpuBuild:
    compiled: tuple[str, ...]  # instruction sets of FLAGS the server was compiled to use
    unused: tuple[str, ...]  # of FLAGS, those this CPU has and the build does not use

    def describe(self) -> str:
        built = ", ".join(self.compiled) or f"none of {', '.join(FLAGS)}"
        if not self.unused:
            return f"{built} (all of these this CPU has)"
        return (
            f"{built}; this CPU also has {', '.join(self.unused)}: `make native` compiles them in (minutes; "
            "with AVX-512, prompts read about 30% faster)"
        )


def compiled_features(system_info: str) -> set[str]:
    """The features llama.cpp's system info line (``CPU : SSE3 = 1 | AVX = 1 | ...``) marks as compiled in."""
    return {name for name, on in re.findall(r"([A-Z0-9_]+) = (\d+)", system_info) if on != "0"}


def cpu_flags(cpuinfo: str) -> set[str]:
    """The instruction set flags of the first processor in a /proc/cpuinfo text (empty when it has none)."""
    match = re.search(r"^flags\s*:(.*)$", cpuinfo, flags=re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def compare(system_info: str, cpuinfo: str) -> CpuBuild:
    built, has = compiled_features(system_info), cpu_flags(cpuinfo)
    return CpuBuild(
        compiled=tuple(name for name in FLAGS if name in built),
        unused=tuple(name for name, flag in FLAGS.items() if flag in has and name not in built),
    )


@functools.cache
def current() -> CpuBuild | None:
    """The serving build against this CPU; None where either cannot be read (not Linux, no xllamacpp)."""
    try:
        import xllamacpp

        return compare(xllamacpp.get_system_info(), CPUINFO.read_text(encoding="utf-8"))
    except (ImportError, OSError):
        return None
