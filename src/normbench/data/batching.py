"""Batching through a real ``DataLoader``: one data order for 1 or N processes, resumable mid-epoch.

:class:`EpochBatchSampler` yields the batches ``RandomSampler`` + ``BatchSampler`` would (each
epoch draws a seed from the global torch RNG and permutes with it), and adds two things:

* under DDP (``torch.distributed`` initialised) every rank takes its contiguous share of each
  *global* batch of ``batch_size x world_size`` indices, so N processes at ``batch_size`` see the
  same global batches, in the same order, as one process at ``N x batch_size``;
* :class:`ResumableLoader` exposes ``state_dict``/``load_state_dict`` (Lightning stores them in
  checkpoints), so a run resumed from a mid-epoch checkpoint continues with the next batch of the
  same permutation instead of restarting the epoch.

``IndexedTensors`` implements ``__getitems__`` so the loader fetches a whole batch with one
tensor index instead of ``batch_size`` calls to ``__getitem__`` plus a collate of tuples. Its
tensors may live on the training device (:func:`training_device`): the sampler then yields index
tensors on that device, moved there once per epoch, and a step indexes the data set in place, with no
collate, no host-to-device copy of the batch and no wait for the device.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, Sampler

from normbench.rng import RngStates, rng_states, set_rng_states


class IndexedTensors(Dataset):
    """Rows of equally long tensors; ``ds.__getitems__(indices)`` returns one batch per tensor."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        if not tensors or any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError("IndexedTensors needs tensors with the same first dimension")
        self.tensors = tensors

    def __len__(self) -> int:
        return len(self.tensors[0])

    @property
    def device(self) -> torch.device:
        return self.tensors[0].device

    def to(self, device: torch.device | str) -> IndexedTensors:
        """The same rows on ``device`` (this object itself if they are there already)."""
        device = torch.device(device)
        if all(t.device == device for t in self.tensors):
            return self
        return IndexedTensors(*(t.to(device) for t in self.tensors))

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        return tuple(t[i] for t in self.tensors)

    def __getitems__(self, indices: list[int] | torch.Tensor) -> tuple[torch.Tensor, ...]:
        idx = torch.as_tensor(indices, device=self.device)
        return tuple(t[idx] for t in self.tensors)


def keep_batch(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Collate function for ``__getitems__`` batches, which are already stacked."""
    return batch


def training_device(datamodule: Any) -> torch.device:
    """The device the attached trainer trains on (its strategy's root device; the CPU without a trainer)."""
    trainer = getattr(datamodule, "trainer", None)
    return torch.device("cpu") if trainer is None else trainer.strategy.root_device


def process_group() -> tuple[int, int]:
    """``(rank, world_size)`` of the initialised default process group, else ``(0, 1)``."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def draw_epoch_seed(generator: torch.Generator | None = None) -> int:
    """The seed ``RandomSampler`` draws at the start of an epoch (from the global RNG by default)."""
    return int(torch.empty((), dtype=torch.int64).random_(generator=generator).item())


class EpochBatchSampler(Sampler[list[int]]):
    """Batches of indices: a fresh permutation per epoch if ``shuffle``, else ``0..n-1`` in order.

    Training (``shuffle``): global batch j is ``perm[j*B*W : (j+1)*B*W]`` with B = ``batch_size``
    and W ranks; rank r takes its r-th contiguous share. A last global batch smaller than W is
    dropped (every rank must take the same number of steps). Evaluation (not ``shuffle``): rank r
    takes the r-th contiguous block of the data set, in batches of B.

    Args:
        n: data set size.
        batch_size: batch size per process.
        shuffle: draw a new permutation each epoch (``draw_epoch_seed(generator)``).
        generator: RNG of the epoch seeds (default: the global torch RNG, as ``RandomSampler``).
        device: yield each batch as an index tensor on this device (the epoch's permutation is drawn on
            the CPU, as always, and moved there once per epoch); ``None``: as a list of ints.
    """

    def __init__(
        self,
        n: int,
        batch_size: int,
        shuffle: bool,
        generator: torch.Generator | None = None,
        device: torch.device | None = None,
    ) -> None:
        if n <= 0 or batch_size <= 0:
            raise ValueError(f"EpochBatchSampler needs n > 0 and batch_size > 0, got {n} and {batch_size}")
        self.n, self.batch_size, self.shuffle, self.generator = n, batch_size, shuffle, generator
        self.device = device
        self.epoch_seed: int | None = None
        self._resume: tuple[int, int] | None = None  # (epoch seed, batches already done)

    def _global_batches(self, world: int) -> list[tuple[int, int]]:
        step = self.batch_size * world
        starts = range(0, self.n, step)
        return [(s, min(s + step, self.n)) for s in starts if min(s + step, self.n) - s >= world]

    def __len__(self) -> int:
        rank, world = process_group()
        if self.shuffle:
            return len(self._global_batches(world))
        lo, hi = self._eval_block(rank, world)
        return -(-(hi - lo) // self.batch_size)

    def _eval_block(self, rank: int, world: int) -> tuple[int, int]:
        bounds = torch.arange(self.n).tensor_split(world)[rank]
        return (int(bounds[0]), int(bounds[-1]) + 1) if len(bounds) else (0, 0)

    def __iter__(self) -> Iterator[list[int] | torch.Tensor]:
        rank, world = process_group()
        if not self.shuffle:
            lo, hi = self._eval_block(rank, world)
            for start in range(lo, hi, self.batch_size):
                stop = min(start + self.batch_size, hi)
                yield list(range(start, stop)) if self.device is None else torch.arange(start, stop, device=self.device)
            return
        if self._resume is not None:
            (seed, skip), self._resume = self._resume, None
        else:
            seed, skip = draw_epoch_seed(self.generator), 0
        self.epoch_seed = seed
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(seed))
        if self.device is not None:
            order = to_device(order, self.device)
        for start, stop in self._global_batches(world)[skip:]:
            share = order[start:stop].tensor_split(world)[rank]
            yield share if self.device is not None else share.tolist()

    def resume(self, epoch_seed: int, batches_done: int) -> bool:
        """Make the next epoch continue the permutation ``epoch_seed`` after ``batches_done`` batches.

        Returns whether it will: a finished (or unshuffled) epoch is not resumed, the next starts afresh.
        """
        if self.shuffle and batches_done < len(self):
            self._resume = (int(epoch_seed), int(batches_done))
            return True
        return False


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``t`` copied to ``device`` without waiting for it: a CUDA copy goes through pinned memory, since a
    copy from pageable memory waits until the device has finished its queued work."""
    if device.type == "cuda":
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


class LoaderState(TypedDict, total=False):
    """A :class:`ResumableLoader`'s checkpointed position: all three fields, or none before its first shuffled
    epoch (or without a progress counter)."""

    epoch_seed: int
    """The seed of the current epoch's permutation."""
    batches_done: int
    """Batches of that epoch training had consumed."""
    rng: RngStates
    """The global RNG states of that moment, restored after the resumed loader's iterator is created."""


class ResumableLoader(DataLoader):
    """A ``DataLoader`` over an :class:`EpochBatchSampler` whose position Lightning checkpoints.

    ``progress()`` returns how many batches of the current epoch training has consumed (the
    loader cannot count them itself: Lightning fetches batches ahead of the training step).
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_sampler: EpochBatchSampler,
        collate_fn: Callable,
        progress: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(dataset, batch_sampler=batch_sampler, collate_fn=collate_fn)
        self.progress = progress
        self._rng_after_iter: RngStates | None = None

    def state_dict(self) -> LoaderState:
        """Position in the epoch, and the global RNG states of that moment."""
        sampler: EpochBatchSampler = self.batch_sampler
        if sampler.epoch_seed is None or self.progress is None:
            return {}
        return {"epoch_seed": sampler.epoch_seed, "batches_done": int(self.progress()), "rng": rng_states()}

    def load_state_dict(self, state: LoaderState) -> None:
        if state:
            if self.batch_sampler.resume(state["epoch_seed"], state["batches_done"]):
                self._rng_after_iter = state.get("rng")

    def __iter__(self) -> Any:
        # Creating an iterator draws a base seed from the global RNG. On resume, that draw belongs to
        # the epoch's start, which the checkpoint already lies past: restore the RNG after it.
        iterator = super().__iter__()
        if self._rng_after_iter is not None:
            set_rng_states(self._rng_after_iter)
            self._rng_after_iter = None
        return iterator


def trainer_progress(datamodule: Any) -> Callable[[], int] | None:
    """Batches of the current epoch the attached trainer has trained on (``None`` if no trainer)."""
    trainer = getattr(datamodule, "trainer", None)
    if trainer is None:
        return None
    return lambda: trainer.fit_loop.epoch_loop.batch_progress.current.processed


def batch_loader(
    dataset: Dataset,
    batch_size: int,
    shuffle: bool,
    collate_fn: Callable = keep_batch,
    progress: Callable[[], int] | None = None,
    generator: torch.Generator | None = None,
    device: torch.device | None = None,
) -> ResumableLoader:
    """A loader of ``dataset`` in batches of ``batch_size`` (see :class:`EpochBatchSampler`, also for ``device``)."""
    sampler = EpochBatchSampler(len(dataset), batch_size, shuffle, generator, device)
    return ResumableLoader(dataset, sampler, collate_fn, progress)


def tensor_loader(
    dataset: IndexedTensors, batch_size: int, shuffle: bool, progress: Callable[[], int] | None = None
) -> ResumableLoader:
    """A loader yielding stacked batches of ``dataset``, indexed where its tensors are; reshuffled each
    epoch if ``shuffle``."""
    return batch_loader(dataset, batch_size, shuffle, keep_batch, progress, device=dataset.device)
