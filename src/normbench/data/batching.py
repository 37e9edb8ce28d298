"""Fast batching of in-memory tensors through a real ``DataLoader``.

``IndexedTensors`` implements ``__getitems__`` so the loader fetches a whole batch with one
tensor index instead of ``batch_size`` calls to ``__getitem__`` plus a collate of tuples.
Sampling stays with ``RandomSampler``/``BatchSampler`` so Lightning can shard it under DDP.
"""

from __future__ import annotations

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler


class IndexedTensors(Dataset):
    """Rows of equally long tensors; ``ds.__getitems__(indices)`` returns one batch per tensor."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        if not tensors or any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError("IndexedTensors needs tensors with the same first dimension")
        self.tensors = tensors

    def __len__(self) -> int:
        return len(self.tensors[0])

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        return tuple(t[i] for t in self.tensors)

    def __getitems__(self, indices: list[int]) -> tuple[torch.Tensor, ...]:
        idx = torch.as_tensor(indices)
        return tuple(t[idx] for t in self.tensors)


def keep_batch(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Collate function for ``__getitems__`` batches, which are already stacked."""
    return batch


def tensor_loader(dataset: IndexedTensors, batch_size: int, shuffle: bool) -> DataLoader:
    """A DataLoader yielding stacked batches of ``dataset``; reshuffled each epoch if ``shuffle``."""
    sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
    return DataLoader(
        dataset, batch_sampler=BatchSampler(sampler, batch_size, drop_last=False), collate_fn=keep_batch
    )
