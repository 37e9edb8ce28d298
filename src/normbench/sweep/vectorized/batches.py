"""The seeds' training batches, stacked: per step one batch of each seed's own epoch order, shape (K, B, ...).

Each seed draws its batches with its own generator, advanced as the global RNG of a lone run is (a base-seed draw per
loader iterator, an epoch-seed draw per epoch). Seeds with their own data (``data.data_seed: seed``, the authors'
protocol) each draw from their own data set and are evaluated on their own held-out set. Their training sets may differ
by a few rows, so a batch shorter than the others (an epoch's last) is padded to the longest with the task module's
``STACK_PADDING`` (one value per batch tensor): padded labels are the loss's ignore index (:data:`IGNORE_INDEX`), so
each seed's loss and metrics are those of its real rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader, IterableDataset

from normbench.data.batching import EpochBatchSampler, ResumableLoader, draw_epoch_seed

IGNORE_INDEX = -100
"""The target ``F.cross_entropy`` ignores by default: what a padded row's label must become."""


class StackedBatches(IterableDataset):
    """Per step, one batch of each seed's own epoch order over its own data set, stacked: ``(tensors, rows)``
    with tensors of shape (K, B, ...) and ``rows[k]`` the real rows of seed k's batch (B unless padded).

    ``datasets``: one per seed (the same object when the seeds share their data). Seeds must take the
    same number of steps per epoch; a shorter batch is padded with ``padding`` (one value per tensor).
    """

    def __init__(
        self,
        datasets: list[Any],
        batch_size: int,
        generators: list[torch.Generator],
        padding: tuple[int, ...] | None = None,
    ) -> None:
        self.datasets, self.generators, self.padding = datasets, generators, padding
        # batches indexed where each data set lives (index tensors there, as a lone run's loader yields)
        self.samplers = [
            EpochBatchSampler(len(d), batch_size, True, g, device=getattr(d, "device", None))
            for d, g in zip(datasets, generators, strict=False)
        ]
        steps = {len(s) for s in self.samplers}
        if len(steps) != 1:
            raise ValueError(
                f"vectorize: the seeds' training sets ({', '.join(str(len(d)) for d in datasets)} rows) "
                f"give {sorted(steps)} batches of {batch_size} per epoch; stack seeds with as many "
                f"steps per epoch, or use --vectorize 1"
            )

    def __len__(self) -> int:
        return len(self.samplers[0])

    def __iter__(self) -> Iterator[tuple[tuple[torch.Tensor, ...], list[int]]]:
        for g in self.generators:  # a lone run's loader draws a base seed when its iterator is made
            draw_epoch_seed(g)
        return self._batches([iter(s) for s in self.samplers])

    def _batches(
        self, iterators: list[Iterator[list[int] | torch.Tensor]]
    ) -> Iterator[tuple[tuple[torch.Tensor, ...], list[int]]]:
        for indices in zip(*iterators, strict=False):
            parts = [d.__getitems__(idx) for d, idx in zip(self.datasets, indices, strict=False)]
            rows = [len(idx) for idx in indices]
            if len(set(rows)) > 1:
                parts = [self._padded(part, max(rows)) for part in parts]
            yield tuple(torch.stack(column) for column in zip(*parts, strict=False)), rows

    def _padded(self, part: tuple[torch.Tensor, ...], rows: int) -> tuple[torch.Tensor, ...]:
        """``part`` with rows of ``padding`` appended up to ``rows``."""
        if self.padding is None or len(self.padding) != len(part):
            raise ValueError(
                "vectorize: these seeds' batches differ in size and the task module declares no "
                "STACK_PADDING for its batch tensors; use --vectorize 1"
            )
        return tuple(
            torch.cat([t, t.new_full((rows - len(t), *t.shape[1:]), value)])
            for t, value in zip(part, self.padding, strict=False)
        )


class StackedData(L.LightningDataModule):
    """The seeds' data modules as one: training batches from :class:`StackedBatches`; for validation
    the one shared loader, or (each seed with its own data) one loader per seed, seed k's at index k."""

    def __init__(
        self,
        inners: list[L.LightningDataModule],
        generators: list[torch.Generator],
        padding: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__()
        self.inners, self.generators, self.padding = inners, generators, padding

    def prepare_data(self) -> None:
        for inner in self.inners:
            inner.prepare_data()

    def setup(self, stage: str) -> None:
        for inner in self.inners:  # attached to the stack's trainer: their data sets go to its device
            inner.trainer = self.trainer
            inner.setup(stage)

    def train_dataloader(self) -> DataLoader:
        loaders = [inner.train_dataloader() for inner in self.inners]
        if not all(isinstance(loader, ResumableLoader) for loader in loaders):
            raise ValueError("vectorize: the task's training loader must be a normbench ResumableLoader")
        datasets = [loader.dataset for loader in loaders]
        if len(loaders) == 1:
            datasets = datasets * len(self.generators)
        return DataLoader(
            StackedBatches(datasets, loaders[0].batch_sampler.batch_size, self.generators, self.padding),
            batch_size=None,
        )

    def val_dataloader(self) -> DataLoader | list[DataLoader]:
        if len(self.inners) == 1:
            return self.inners[0].val_dataloader()
        return [inner.val_dataloader() for inner in self.inners]
