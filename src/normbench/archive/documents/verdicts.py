"""The statistics a judged claim holds, as JSON data: an interval (:class:`IntervalDoc`), an equivalence test
(:class:`EquivalenceDoc`), a gap to the paper's value (:class:`GapDoc`), and what qualifies a verdict: the protocol
check, the power, a borderline equivalence, a provisional verdict, the random-key nulls beside it, censored seeds and a
stability claim's failure counts (:class:`normbench.archive.claim.JudgedEntry`'s parts; built by
:mod:`normbench.judge.stats`, :mod:`normbench.judge.verdicts.qualify`, :mod:`normbench.judge.chance.rules` and the
rules).
"""

from __future__ import annotations

from typing import TypedDict


class IntervalDoc(TypedDict, total=False):
    """An interval (:class:`normbench.judge.stats.Interval`) as a board stores it
    (:meth:`normbench.judge.stats.Interval.as_dict`: its fields, tuples as lists, every one there), e.g. a judged
    claim's ``difference``."""

    estimate: float
    low: float | None
    high: float | None
    n: list[int]
    p_value: float | None
    of: list[str]
    df: float | None


class EquivalenceDoc(TypedDict):
    """An equivalence test (:class:`normbench.judge.stats.Equivalence`) as a board stores it (a judged claim's
    ``equivalence``): its 90% ``interval``, the ``margin``, the ``sides`` tested, whether it is ``shown`` or
    ``refuted`` and the TOST ``p_value``."""

    interval: IntervalDoc
    margin: float
    sides: str
    shown: bool
    refuted: bool
    p_value: float | None


class GapDoc(TypedDict):
    """A mean beside a target (:func:`normbench.judge.stats.gap`, a judged claim's ``gap_to_paper`` per role):
    ``estimate`` = mean − ``paper`` (the target), ``low``/``high`` its 95% t-interval (``None`` with one value), ``n``
    the values."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    paper: float


class ProtocolCheck(TypedDict):
    """Whether a claim's runs follow its protocol (a judged claim's ``protocol``): the protocol's ``name`` and
    ``description``, whether they ``met`` it, and each setting that differs (``key: run value, protocol value``)."""

    name: str
    description: str
    met: bool
    differences: list[str]


class Power(TypedDict, total=False):
    """What a judged claim's seeds could detect (its ``power``).

    detectable: the smallest difference (a stability claim: failure rate, ``of``) found with power ``level``;
    leaning: where the point estimate lies, ``with the claim`` or ``against the claim`` (``None``: no sign).
    """

    detectable: float | None
    leaning: str | None
    level: float
    of: str


class Borderline(TypedDict):
    """An equivalence whose 90% interval ends within the metric's tolerance of its margin (a judged claim's
    ``borderline``): the verdict it ``was``, the ``distance`` to the margin and the ``tolerance``."""

    was: str
    distance: float
    tolerance: float


class Provisional(TypedDict):
    """A verdict judged on fewer finished seeds than its protocol declares: ``finished`` of ``declared``."""

    finished: int
    declared: int


class NullAtKeys(TypedDict):
    """The random-key null at ``n`` keys: its ``mean``, ``sem`` and the ``sets`` drawn."""

    n: int
    mean: float
    sem: float | None
    sets: int


class PaperChance(TypedDict):
    """The null at the paper's own key counts beside its value (a judged claim's ``paper_chance``).

    role, d, n: as the claim's ``chance_at``; null: the null at each key count; paper: the paper's value of ``role``;
    position: where it lies against the nulls (``below``, ``at``, ``above``); text: that in words.
    """

    role: str
    d: int
    n: list[int]
    null: list[NullAtKeys]
    paper: float
    position: str
    text: str


class NullDraws(TypedDict):
    """A matched null as a claim reads it: its ``mean``, ``sem`` and the ``sets`` drawn."""

    mean: float
    sem: float | None
    sets: int | None


class AgainstNull(TypedDict):
    """A claim's ``above_chance`` role against its matched random-key null (a judged claim's ``against_null``).

    role, metric: the fraction judged; null: the null beside it (``None``: none); difference: the Welch 95% interval
    of mean − null; position: ``above``, ``at`` or ``below`` chance (``None``: no null).
    """

    role: str
    metric: str
    null: NullDraws | None
    difference: IntervalDoc | None
    position: str | None


class CensoredSeed(TypedDict):
    """A seed that never reached a threshold within its run: the ``seed`` and the last step it is censored at."""

    seed: int
    at_step: float | None


class Censored(TypedDict):
    """A steps-to-threshold claim's censored seeds (a judged claim's ``censored``): the ``role``, its ``seeds``, the
    seeds the verdict is judged on (``judged_on``) and the interval with the censored seeds at their last steps
    (``with_censored``: shown, not judged)."""

    role: str
    seeds: list[CensoredSeed]
    judged_on: str
    with_censored: IntervalDoc | None


class FailureCount(TypedDict):
    """A stability claim's count at one learning rate: ``failed`` of ``runs``."""

    failed: int
    runs: int
