"""The synthetic "majority" task of Brody et al. (2023), Section 4.1 and Appendix E.1.

Each sequence has ``seq_len`` tokens over ``num_classes`` classes; the label at every position is
its majority class, which beats the runner-up by at least ``min_delta`` tokens. Two generators:

* ``uniform`` (normbench's): class counts c_1..c_k drawn as p ~ Dirichlet(1),
  c ~ Multinomial(seq_len, p), kept if the margin holds, tokens shuffled.
* ``paper`` (the authors' code): a depth-first enumeration of the partitions of ``seq_len``
  (:func:`paper_partitions`), 10 sequences per kept partition, each with a fresh random
  assignment of classes to the parts and its tokens in contiguous blocks.

The split into train and test is stratified by label. Everything is a pure function of ``seed``
and cached on disk (the authors' RNG is unseeded, so their data differ from run to run).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader

from normbench.data.batching import IndexedTensors, tensor_loader, trainer_progress, training_device
from normbench.io import atomic_write, cache_root, discard_corrupt_cache

GENERATOR_VERSION = 1
GENERATORS = ("uniform", "paper")
SEQUENCES_PER_PARTITION = 10  # the authors' code: 10 sequences per kept partition


@dataclass(frozen=True)
class MajoritySpec:
    """What defines a majority data set; its hash names the cache file."""

    num_sequences: int = 100_000
    seq_len: int = 50
    num_classes: int = 20
    min_delta: int = 6
    test_fraction: float = 0.2
    seed: int = 0
    generator: str = "uniform"

    def __post_init__(self) -> None:
        if self.generator not in GENERATORS:
            raise ValueError(
                f"data.generator: {self.generator!r} is not allowed; choose one of {', '.join(GENERATORS)}"
            )
        checks = {
            "data.num_sequences": self.num_sequences >= 2,
            "data.seq_len": self.seq_len >= 1,
            "data.num_classes": self.num_classes >= 2,
            "data.min_delta": 1 <= self.min_delta <= self.seq_len,
            "data.test_fraction": 0.0 < self.test_fraction < 1.0,
        }
        for field, ok in checks.items():
            if not ok:
                name = field.split(".")[1]
                raise ValueError(f"{field}: invalid value {getattr(self, name)!r}")

    def digest(self) -> str:
        fields = asdict(self)
        if self.generator == "uniform":  # the name of a cache written before the field existed
            del fields["generator"]
        payload = json.dumps({**fields, "generator_version": GENERATOR_VERSION}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def sample_majority(n: int, spec: MajoritySpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` sequences (n, seq_len) int64 and their majority labels (n,), by rejection."""
    seqs, labels, have = [], [], 0
    k, t = spec.num_classes, spec.seq_len
    while have < n:
        m = max(1024, 2 * (n - have))
        counts = rng.multinomial(t, rng.dirichlet(np.ones(k), size=m))  # (m, k)
        top2 = np.sort(counts, axis=1)[:, -2:]
        keep = counts[(top2[:, 1] - top2[:, 0]) >= spec.min_delta]
        if not len(keep):
            continue
        # token at position j is the class whose cumulative count first exceeds j
        ends = np.cumsum(keep, axis=1)
        tokens = (np.arange(t)[None, :, None] >= ends[:, None, :]).sum(-1)
        order = np.argsort(rng.random(tokens.shape), axis=1)
        seqs.append(np.take_along_axis(tokens, order, axis=1))
        labels.append(keep.argmax(axis=1))
        have += len(keep)
    return np.concatenate(seqs)[:n].astype(np.int64), np.concatenate(labels)[:n].astype(np.int64)


def paper_partitions(total: int, max_parts: int, rng: np.random.Generator) -> Iterator[tuple[int, ...]]:
    """The partitions of ``total`` in the order the authors' depth-first recursion finds them.

    Parts are filled left to right; each new part is an integer from the previous part (1 for the
    first) up to what remains, tried in an order shuffled by ``rng`` at every node; the
    ``max_parts``-th part takes whatever remains (it may be smaller than the one before). A branch
    whose remainder is below its last part (and not the last allowed part) ends without a partition.
    """

    def fill(parts: tuple[int, ...], remaining: int) -> Iterator[tuple[int, ...]]:
        if remaining == 0:
            yield parts
            return
        if len(parts) == max_parts - 1:
            yield (*parts, remaining)
            return
        low = parts[-1] if parts else 1
        for part in rng.permutation(np.arange(low, remaining + 1)):
            yield from fill((*parts, int(part)), remaining - int(part))

    yield from fill((), total)


def keeps_majority(parts: tuple[int, ...], min_delta: int) -> bool:
    """The authors' filter: more than one part, and the last exceeds the one before by ``min_delta``."""
    return len(parts) > 1 and parts[-1] - parts[-2] >= min_delta


def sample_paper(spec: MajoritySpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The authors' data: 10 sequences per kept partition, until 10 x (partitions kept) > ``num_sequences``.

    Each sequence maps the parts to the classes of a fresh random permutation (part i -> class
    perm[i]) and writes each part as one contiguous block; its label is the class of the last part.
    The data set therefore has 10 x ceil((num_sequences + 1) / 10) sequences.
    """
    seqs, labels, kept = [], [], 0
    for parts in paper_partitions(spec.seq_len, spec.num_classes, rng):
        if not keeps_majority(parts, spec.min_delta):
            continue
        kept += 1
        for _ in range(SEQUENCES_PER_PARTITION):
            classes = rng.permutation(spec.num_classes)[: len(parts)]
            seqs.append(np.repeat(classes, parts))
            labels.append(classes[-1])
        if SEQUENCES_PER_PARTITION * kept > spec.num_sequences:
            break
    if SEQUENCES_PER_PARTITION * kept <= spec.num_sequences:
        raise ValueError(
            f"data.num_sequences: only {kept} partitions of seq_len={spec.seq_len} into at most "
            f"num_classes={spec.num_classes} parts have a majority margin of {spec.min_delta}, "
            f"{SEQUENCES_PER_PARTITION * kept} sequences; ask for fewer than that"
        )
    return np.stack(seqs).astype(np.int64), np.asarray(labels, dtype=np.int64)


def stratified_split(
    labels: np.ndarray, test_fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) with each label's share of the test set equal to ``test_fraction``."""
    train, test = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        n_test = int(round(test_fraction * len(idx)))
        test.append(idx[:n_test])
        train.append(idx[n_test:])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


def generate_majority(spec: MajoritySpec) -> dict[str, np.ndarray]:
    """The whole data set for ``spec``: train/test tokens and labels."""
    rng = np.random.default_rng(spec.seed)
    x, y = sample_paper(spec, rng) if spec.generator == "paper" else sample_majority(spec.num_sequences, spec, rng)
    tr, te = stratified_split(y, spec.test_fraction, rng)
    return {"train_x": x[tr], "train_y": y[tr], "test_x": x[te], "test_y": y[te]}


def load_majority(spec: MajoritySpec, cache_dir: str | Path | None = None) -> dict[str, np.ndarray]:
    """Generate the data set for ``spec`` once and reuse the cached ``.npz`` afterwards (a cached file that
    cannot be read is named and generated again)."""
    path = Path(cache_dir or cache_root() / "majority") / f"majority-{spec.digest()}.npz"
    if path.exists():
        try:
            with np.load(path) as f:
                return {key: f[key] for key in f.files}
        except Exception as exc:  # noqa: BLE001 - a cut or damaged file (BadZipFile, EOFError, ValueError, ...)
            discard_corrupt_cache(path, exc)
    arrays = generate_majority(spec)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    atomic_write(path, write)
    return arrays


def training_seed() -> int:
    """The seed ``seed_everything`` set for this run (Lightning keeps it in ``PL_GLOBAL_SEED``)."""
    seed = os.environ.get("PL_GLOBAL_SEED")
    if seed is None:
        raise ValueError(
            "data.data_seed: `seed` follows the training seed, but no seed was set "
            "(give --seed_everything, or an integer data_seed)"
        )
    return int(seed)


class MajorityDataModule(L.LightningDataModule):
    """Majority sequences for training; the paper's held-out 20% is evaluated as the validation loop.

    Args:
        num_sequences: total sequences before the train/test split (paper: 100,000).
        seq_len: tokens per sequence (paper: 50).
        num_classes: token classes (paper: 20).
        min_delta: minimum margin of the majority count over the runner-up.
        test_fraction: stratified held-out share (paper: 0.2).
        data_seed: seed of the generator, independent of the training seed; ``seed``: the training
            seed (``seed_everything``), so every run has its own data and split, as the authors'
            unseeded generator gives, and the seed spread includes the data's variance.
        generator: ``uniform`` (normbench's Dirichlet-multinomial counts, shuffled tokens) or
            ``paper`` (the authors' partition enumeration, tokens in blocks; see the module docstring).
        batch_size: training batch size (paper: 6000).
        eval_batch_size: batch size of the test evaluation.
        cache_dir: where the generated ``.npz`` is cached (default ``$NORMBENCH_CACHE/majority``).
    """

    def __init__(
        self,
        num_sequences: int = 100_000,
        seq_len: int = 50,
        num_classes: int = 20,
        min_delta: int = 6,
        test_fraction: float = 0.2,
        data_seed: int | str = 0,
        generator: str = "uniform",
        batch_size: int = 6000,
        eval_batch_size: int = 10_000,
        cache_dir: str | None = None,
    ) -> None:
        super().__init__()
        if batch_size <= 0 or eval_batch_size <= 0:
            raise ValueError(
                f"data.batch_size and data.eval_batch_size must be positive, got {batch_size} and {eval_batch_size}"
            )
        self.save_hyperparameters()
        seed = training_seed() if data_seed == "seed" else data_seed
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(
                f"data.data_seed: {data_seed!r} is not allowed; give an integer or `seed` (the training seed)"
            )
        self.spec = MajoritySpec(num_sequences, seq_len, num_classes, min_delta, test_fraction, seed, generator)
        self.batch_size, self.eval_batch_size, self.cache_dir = batch_size, eval_batch_size, cache_dir
        self.train_set: IndexedTensors | None = None
        self.test_set: IndexedTensors | None = None

    def prepare_data(self) -> None:
        load_majority(self.spec, self.cache_dir)

    def setup(self, stage: str | None = None) -> None:
        """Load the data set onto the trainer's device (80K x 50 tokens of the paper: 32 MB), where batches are
        indexed."""
        if self.train_set is None:
            arrays = {k: torch.from_numpy(v) for k, v in load_majority(self.spec, self.cache_dir).items()}
            self.train_set = IndexedTensors(arrays["train_x"], arrays["train_y"])
            self.test_set = IndexedTensors(arrays["test_x"], arrays["test_y"])
        device = training_device(self)
        self.train_set, self.test_set = self.train_set.to(device), self.test_set.to(device)

    def train_dataloader(self) -> DataLoader:
        return tensor_loader(self.train_set, self.batch_size, shuffle=True, progress=trainer_progress(self))

    def val_dataloader(self) -> DataLoader:
        return tensor_loader(self.test_set, self.eval_batch_size, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self.val_dataloader()
