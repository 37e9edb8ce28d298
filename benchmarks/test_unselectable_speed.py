"""Unselectable-key analysis: the certificate method against one HiGHS LP per key, same inputs.

Goal: >= 50x the reference's keys per second at (n=1024, d=8), the paper's Table 1 setting, and
at (n=128, d=8), with identical masks.
"""

from __future__ import annotations

import numpy as np
import pytest

from normbench.analysis.unselectable import unselectable_mask, unselectable_mask_lp

CASES = {"n=1024 d=8": (1, 1024, 8), "n=128 d=8": (8, 128, 8)}


@pytest.fixture(scope="module")
def inputs() -> dict[str, np.ndarray]:
    return {name: np.random.default_rng(7).standard_normal(shape) for name, shape in CASES.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_reference_one_lp_per_key(benchmark, record_pair, inputs, case: str) -> None:  # noqa: ANN001
    keys = inputs[case]
    mask = benchmark.pedantic(unselectable_mask_lp, args=(keys,), rounds=1, iterations=1)
    np.testing.assert_array_equal(mask, unselectable_mask(keys))
    record_pair(
        f"unselectable keys, {case} (per key)",
        "baseline",
        "goal ratio <= 0.02 (>= 50x)",
        per=keys.shape[0] * keys.shape[1],
    )


@pytest.mark.parametrize("case", list(CASES))
def test_certificates(benchmark, record_pair, inputs, case: str) -> None:  # noqa: ANN001
    keys = inputs[case]
    benchmark.pedantic(unselectable_mask, args=(keys,), rounds=5, iterations=1, warmup_rounds=1)
    record_pair(f"unselectable keys, {case} (per key)", "certificates", per=keys.shape[0] * keys.shape[1])
