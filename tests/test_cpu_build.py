"""Which of the CPU's vector instructions the embedded server's llama.cpp uses; `make native` compiles the rest."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from core.engine.llm import cpu_build

ROOT = Path(__file__).resolve().parents[1]
WHEEL = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | OPENMP = 1 |"
NATIVE = WHEEL.replace("BMI2 = 1 |", "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 |")
ZEN4 = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq avx512vbmi "
    "avx512_vnni avx512_bf16 avx512_vpopcntdq\n\nprocessor\t: 1\nflags\t\t: fpu\n"
)


def test_a_portable_build_on_an_avx512_cpu_names_what_make_native_adds():
    build = cpu_build.compare(WHEEL, ZEN4)
    assert build.compiled == ("AVX2",)
    assert build.unused == ("AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16")
    assert "make native" in build.describe() and "AVX512_BF16" in build.describe()


def test_a_native_build_uses_everything_the_cpu_has():
    build = cpu_build.compare(NATIVE, ZEN4)
    assert build.unused == () and "make native" not in build.describe()
    assert build.describe().startswith("AVX2, AVX512, AVX512_VBMI, AVX512_VNNI, AVX512_BF16")


def test_features_marked_off_or_a_cpuinfo_without_flags_count_as_absent():
    assert "AVX2" not in cpu_build.compiled_features("CPU : AVX = 1 | AVX2 = 0 |")
    assert cpu_build.compare(WHEEL, "processor : 0\nFeatures : fp asimd\n").unused == ()  # an ARM cpuinfo


@pytest.mark.skipif(not cpu_build.CPUINFO.exists(), reason="no /proc/cpuinfo (not Linux)")
def test_the_serving_build_is_read_from_xllamacpp_and_this_cpu():
    import xllamacpp

    build = cpu_build.current()
    info, flags = xllamacpp.get_system_info(), cpu_build.cpu_flags(cpu_build.CPUINFO.read_text())
    assert build is not None and set(build.compiled) <= set(cpu_build.FLAGS)
    for name in build.compiled:
        assert f"{name} = 1" in info
    for name in build.unused:
        assert cpu_build.FLAGS[name] in flags and f"{name} = 1" not in info


def test_make_native_rebuilds_the_pinned_xllamacpp_for_this_cpu():
    pin = subprocess.run(
        ["grep", "-oE", "^xllamacpp==[^ ;#]+", "requirements.txt"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(pin) == 1 and re.fullmatch(r"xllamacpp==[\d.]+", pin[0])
    plan = subprocess.run(["make", "-n", "native"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "-DGGML_NATIVE=ON" in plan and "--no-binary xllamacpp" in plan
