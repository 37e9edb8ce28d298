"""A replicate's record: the platform class that names it."""

from __future__ import annotations

from normbench.archive.replicate import platform_slug
from tests.archive.test_store import CPU, GPU, INTEL


def test_platform_slugs_name_the_gpu_or_the_cpu_with_its_threads() -> None:
    assert platform_slug({"platform": GPU}) == "gpu-nvidia-h200"
    assert platform_slug({"platform": CPU}) == "cpu-amd-epyc-avx2-t1"
    assert platform_slug({"platform": INTEL}) == "cpu-intel-xeon-avx512-t1"
    assert platform_slug({"platform": {**INTEL, "mkl_cbwr": "AUTO,STRICT"}}) == "cpu-intel-xeon-avx512-t1"
    assert platform_slug({"platform": {**INTEL, "mkl_cbwr": ""}}) == "cpu-intel-xeon-avx512-t1-mkl-cbwr-unset"
    assert platform_slug({"platform": {**INTEL, "mkl_cbwr": "COMPATIBLE"}}).endswith("-t1-mkl-cbwr-compatible")
    clocked = {**INTEL, "cpu": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", "threads": 2}
    assert platform_slug({"platform": clocked}) == "cpu-intel-xeon-gold-6248-avx512-t2"
    assert platform_slug({"platform": {**INTEL, "cpu": "AMD EPYC 7B13 64-Core Processor"}}) == (
        "cpu-amd-epyc-7b13-64-core-avx512-t1"
    )
