"""The stability rule: failed runs (diverged, at chance, collapsed) over a learning-rate grid, Fisher's exact test."""

from __future__ import annotations

import pytest
from scipy import stats

from normbench.archive import JudgedClaim
from normbench.judge.claims import check_claim, judge
from normbench.judge.rules.stability import counts, detectable_failure_rate
from normbench.render.claims_view import details
from tests.factories import make_variant

CLAIM = {
    "id": "x.stability",
    "owner": "paper",
    "source": "test",
    "statement": "post fails more often than pre",
    "metric": "final_val_loss",
    "variants": {"post": "post/both", "pre": "pre/both"},
    "rule": {"kind": "stability", "less_stable": "post", "axis": "lr"},
}
RATES = ("0.001", "0.004", "0.016")


def grid(failed: dict[str, dict[str, list[int]]], seeds: int = 3) -> dict[str, dict]:
    """Variants ``base,lr=r`` with ``seeds`` seeds each; ``failed[base][r]`` lists the failed seeds (the first one
    diverged, the others collapsed)."""
    out = {}
    for base in ("post/both", "pre/both"):
        for rate in RATES:
            bad = failed.get(base, {}).get(rate, [])
            extra: dict = {}
            if bad:
                extra["diverged_at_step"] = {str(bad[0]): 120}
                extra["flagged"] = {str(s): "collapsed" for s in bad[1:]} | {str(bad[0]): "diverged at step 120"}
            name = f"{base},lr={rate}"
            out[name] = make_variant(name, list(range(seeds)), **extra)
    return out


def test_failed_runs_are_counted_per_rate_in_numeric_order() -> None:
    variants = grid({"post/both": {"0.016": [0, 1], "0.004": [2]}})
    assert counts("post/both", "lr", variants) == {"0.001": (0, 3), "0.004": (1, 3), "0.016": (2, 3)}
    assert counts("pre/both", "lr", variants) == {r: (0, 3) for r in RATES}


def test_more_failures_of_the_less_stable_role_reproduce_the_claim() -> None:
    variants = grid({"post/both": {"0.004": [0, 1, 2], "0.016": [0, 1, 2]}})
    entry = judge(check_claim(dict(CLAIM)), variants)
    p = stats.fisher_exact([[6, 3], [0, 9]], alternative="greater")[1]
    assert entry["verdict"] == "reproduced" and f"p = {p:.2g}" in entry["rule"]
    assert entry["measured"] == pytest.approx({"post": 6 / 9, "pre": 0.0})
    assert entry["failures"]["post"]["0.016"] == {"failed": 3, "runs": 3}
    assert entry["explanation"].startswith("failed runs (diverged, at chance or collapsed) over 3 values of lr: ")
    assert "lr=0.016: post 3/3, pre 0/3" in entry["explanation"]


def test_the_reverse_is_not_reproduced_and_a_few_failures_are_inconclusive() -> None:
    reverse = grid({"pre/both": {"0.004": [0, 1, 2], "0.016": [0, 1, 2]}})
    assert judge(check_claim(dict(CLAIM)), reverse)["verdict"] == "not reproduced"
    few = grid({"post/both": {"0.016": [0]}})
    assert judge(check_claim(dict(CLAIM)), few)["verdict"] == "inconclusive"
    none = grid({})
    assert judge(check_claim(dict(CLAIM)), none)["verdict"] == "inconclusive"


def test_a_role_without_runs_is_not_run_and_a_bad_rule_is_one_line() -> None:
    variants = {k: v for k, v in grid({}).items() if k.startswith("pre/")}
    entry = judge(check_claim(dict(CLAIM)), variants)
    assert entry["verdict"] == "not run" and "no run of post" in entry["rule"]
    bad = {**CLAIM, "rule": {"kind": "stability", "less_stable": "nobody"}}
    with pytest.raises(ValueError, match=r"^claim 'x.stability': rule.less_stable must name one of its two roles"):
        check_claim(bad)


def test_the_power_is_the_smallest_failure_rate_the_test_finds() -> None:
    """16 runs a side: 5 failures against none is the fewest the one-sided test finds (p = 0.022; 4: p = 0.051), so
    the detectable rate q is the smallest with P(Binom(16, q) >= 5) >= 0.8."""
    q = detectable_failure_rate(16, 16)
    assert q is not None and stats.binom.sf(4, 16, q) >= 0.8 > stats.binom.sf(4, 16, q - 0.01)
    assert (
        stats.fisher_exact([[5, 11], [0, 16]], "greater")[1]
        < 0.05
        < stats.fisher_exact([[4, 12], [0, 16]], "greater")[1]
    )
    assert detectable_failure_rate(3, 3) is None  # 3 of 3 against 0 of 3: p = 0.05, never below it
    assert detectable_failure_rate(10, 10) > q  # fewer runs, only a larger rate is found


def test_a_grid_where_nothing_failed_says_so_with_its_power_and_details() -> None:
    entry = judge(check_claim(dict(CLAIM)), grid({}))
    assert "no run of either failed at any rate of this grid, so it cannot tell them apart" in entry["explanation"]
    assert entry["power"]["detectable"] == detectable_failure_rate(9, 9)
    rate = f"{detectable_failure_rate(9, 9):.2g}"
    assert f"a failure rate of {rate} in post is found with 80% power if pre never fails" in entry["explanation"]
    block = "\n".join(details(JudgedClaim.from_json(entry)))
    assert "- **measured (failed runs)**: post: 0 of 9, pre: 0 of 9" in block
    assert f"a failure rate of {rate} is found with 80% power" in block  # the verdict says what the 0.5 is of
