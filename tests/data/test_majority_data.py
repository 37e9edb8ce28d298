"""The majority generator: true labels, margins, stratified split, determinism, caching."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.majority import MajorityDataModule, MajoritySpec, generate_majority, load_majority


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 400), st.integers(5, 60), st.integers(2, 20), st.integers(1, 5), st.integers(0, 10_000))
def test_every_label_is_the_unique_majority_with_margin(n: int, t: int, k: int, delta: int, seed: int) -> None:
    spec = MajoritySpec(num_sequences=n, seq_len=t, num_classes=k, min_delta=min(delta, t), seed=seed)
    data = generate_majority(spec)
    x = np.concatenate([data["train_x"], data["test_x"]])
    y = np.concatenate([data["train_y"], data["test_y"]])
    assert x.shape == (n, t) and x.min() >= 0 and x.max() < k
    counts = np.stack([np.bincount(row, minlength=k) for row in x])
    top2 = np.sort(counts, axis=1)[:, -2:]
    assert (counts.argmax(1) == y).all()
    assert ((top2[:, 1] - top2[:, 0]) >= spec.min_delta).all()


def test_paper_dataset_sizes_and_stratification() -> None:
    data = generate_majority(MajoritySpec())
    n_train, n_test = len(data["train_y"]), len(data["test_y"])
    assert n_train + n_test == 100_000 and abs(n_test - 20_000) <= 20
    train_share = np.bincount(data["train_y"], minlength=20) / n_train
    test_share = np.bincount(data["test_y"], minlength=20) / n_test
    np.testing.assert_allclose(train_share, test_share, atol=2e-3)
    # sequences are shuffled: the majority class is not always at the front
    assert (
        len({int(row[0] == label) for row, label in zip(data["train_x"][:100], data["train_y"][:100], strict=False)})
        == 2
    )


def test_deterministic_by_seed_and_cached(tmp_path) -> None:
    spec = MajoritySpec(num_sequences=500, seed=3)
    a = load_majority(spec, tmp_path)
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1
    mtime = files[0].stat().st_mtime_ns
    b = load_majority(spec, tmp_path)
    assert files[0].stat().st_mtime_ns == mtime  # reused, not regenerated
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    c = generate_majority(MajoritySpec(num_sequences=500, seed=4))
    assert not np.array_equal(a["train_x"], c["train_x"])


def test_datamodule_batches(tmp_path) -> None:
    dm = MajorityDataModule(num_sequences=1000, batch_size=64, eval_batch_size=100, cache_dir=str(tmp_path))
    dm.prepare_data()
    dm.setup("fit")
    x, y = next(iter(dm.train_dataloader()))
    assert x.shape == (64, 50) and y.shape == (64,) and x.dtype == torch.int64
    assert sum(len(b[1]) for b in dm.val_dataloader()) == len(dm.test_set)
    seen = torch.cat([b[1] for b in dm.train_dataloader()])
    assert len(seen) == len(dm.train_set)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"min_delta": 0}, "data.min_delta"),
        ({"test_fraction": 1.0}, "data.test_fraction"),
        ({"num_classes": 1}, "data.num_classes"),
    ],
)
def test_bad_specs_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        MajoritySpec(**kwargs)


# The authors' generator, checked by hand on seq_len = 5, at most 3 parts: the depth-first
# recursion (parts non-decreasing, the 3rd part takes what remains) finds exactly
#   (1,1,3) (1,2,2) (1,3,1) (1,4) (2,2,1) (2,3) (5)
# -- (3,..) and (4,..) end without a partition since the remainder is below the last part.
# With min_delta = 2 the filter keeps (1,1,3) and (1,4): more than one part, last - previous >= 2.
HAND_PARTITIONS = {(1, 1, 3), (1, 2, 2), (1, 3, 1), (1, 4), (2, 2, 1), (2, 3), (5,)}
HAND_KEPT = {(1, 1, 3), (1, 4)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paper_partitions_by_hand(seed: int) -> None:
    from normbench.data.majority import keeps_majority, paper_partitions

    found = list(paper_partitions(5, 3, np.random.default_rng(seed)))
    assert len(found) == len(set(found)) and set(found) == HAND_PARTITIONS
    assert {p for p in found if keeps_majority(p, 2)} == HAND_KEPT


def test_paper_order_is_shuffled_by_the_rng() -> None:
    from normbench.data.majority import paper_partitions

    orders = {tuple(paper_partitions(9, 4, np.random.default_rng(seed))) for seed in range(6)}
    assert len(orders) > 1


def runs_of(row: np.ndarray) -> list[tuple[int, int]]:
    """(class, length) of each block of equal tokens."""
    out: list[tuple[int, int]] = []
    for token in row.tolist():
        if out and out[-1][0] == token:
            out[-1] = (token, out[-1][1] + 1)
        else:
            out.append((token, 1))
    return out


def test_paper_sequences_are_blocks_of_the_kept_partitions() -> None:
    spec = MajoritySpec(num_sequences=15, seq_len=5, num_classes=3, min_delta=2, seed=0, generator="paper")
    data = generate_majority(spec)
    x = np.concatenate([data["train_x"], data["test_x"]])
    y = np.concatenate([data["train_y"], data["test_y"]])
    assert len(x) == 20  # stops as soon as 10 x (partitions kept) = 20 > 15
    partitions = []
    for row, label in zip(x, y, strict=False):
        blocks = runs_of(row)
        classes = [c for c, _ in blocks]
        assert len(set(classes)) == len(classes)  # one contiguous block per class
        assert classes[-1] == label
        partitions.append(tuple(n for _, n in blocks))
    assert set(partitions) == HAND_KEPT and all(partitions.count(p) == 10 for p in HAND_KEPT)


def test_paper_generator_at_the_paper_size() -> None:
    data = generate_majority(MajoritySpec(generator="paper"))
    x = np.concatenate([data["train_x"], data["test_x"]])
    y = np.concatenate([data["train_y"], data["test_y"]])
    assert len(x) == 100_010 and abs(len(data["test_y"]) - 20_002) <= 20
    counts = np.stack([np.bincount(row, minlength=20) for row in x[:2000]])
    top2 = np.sort(counts, axis=1)[:, -2:]
    assert (counts.argmax(1) == y[:2000]).all() and ((top2[:, 1] - top2[:, 0]) >= 6).all()


def test_unknown_generator_is_one_line() -> None:
    with pytest.raises(ValueError, match="^data.generator: 'authors' is not allowed; choose one of uniform, paper"):
        MajoritySpec(generator="authors")


def test_paper_generator_refuses_more_sequences_than_its_partitions_give() -> None:
    # seq_len 5, 3 classes, margin 2: two partitions are kept (see above), 20 sequences at most
    with pytest.raises(ValueError, match="^data.num_sequences: only 2 partitions"):
        generate_majority(MajoritySpec(num_sequences=25, seq_len=5, num_classes=3, min_delta=2, generator="paper"))


def test_data_seed_seed_follows_the_training_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``data_seed: seed``: each training seed draws its own data, as the authors' unseeded generator does."""
    monkeypatch.setenv("PL_GLOBAL_SEED", "3")
    assert MajorityDataModule(data_seed="seed").spec.seed == 3
    monkeypatch.setenv("PL_GLOBAL_SEED", "4")
    assert MajorityDataModule(data_seed="seed").spec.seed == 4
    assert MajorityDataModule(data_seed=9).spec.seed == 9


def test_data_seed_seed_needs_a_training_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PL_GLOBAL_SEED", raising=False)
    with pytest.raises(ValueError, match=r"^data.data_seed: `seed` follows the training seed, but no seed was set"):
        MajorityDataModule(data_seed="seed")
    with pytest.raises(ValueError, match=r"^data.data_seed: 'one' is not allowed; give an integer or `seed`"):
        MajorityDataModule(data_seed="one")


@pytest.mark.parametrize("cut", ["truncated", "empty", "garbage"])
def test_a_corrupt_cached_file_is_named_and_generated_again(tmp_path, cut: str, capsys) -> None:  # noqa: ANN001
    spec = MajoritySpec(num_sequences=500, seed=3)
    a = load_majority(spec, tmp_path)
    (path,) = tmp_path.glob("*.npz")
    data = path.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 2], "empty": b"", "garbage": b"not numpy " * 50}[cut])
    b = load_majority(spec, tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"normbench: data cache {path} is corrupt (")
    assert err[0].endswith("; rebuilding it")
    assert path.read_bytes() == data or all(np.array_equal(a[k], b[k]) for k in a)
    with np.load(path) as f:  # the rebuilt file reads
        assert all(np.array_equal(f[k], a[k]) for k in a)
