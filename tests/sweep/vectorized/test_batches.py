"""Stacked batches: each seed's own epoch order, a short batch padded to the longest, its padded rows costing no loss."""

from __future__ import annotations

import pytest


def test_a_short_batch_is_padded_and_its_padded_rows_cost_no_loss() -> None:
    import torch
    import torch.nn.functional as F

    from normbench.data.batching import IndexedTensors
    from normbench.sweep.vectorized.batches import StackedBatches

    sets = [IndexedTensors(torch.arange(n * 3).reshape(n, 3), torch.arange(n) % 4) for n in (5, 7)]
    stacked = StackedBatches(sets, 4, [torch.Generator().manual_seed(s) for s in (0, 1)], padding=(0, -100))
    ((x1, _), rows1), ((x, y), rows) = list(iter(stacked))
    assert rows1 == [4, 4] and x1.shape == (2, 4, 3)
    assert rows == [1, 3] and x.shape == (2, 3, 3) and y.shape == (2, 3)
    assert (x[0, 1:] == 0).all() and (y[0, 1:] == -100).all() and (y[1] != -100).all()
    logits = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    assert F.cross_entropy(logits, y[0]) == F.cross_entropy(logits[:1], y[0, :1])
    with pytest.raises(ValueError, match="STACK_PADDING"):
        list(iter(StackedBatches(sets, 4, [torch.Generator(), torch.Generator()])))  # no padding declared
    with pytest.raises(ValueError, match="batches of 2 per epoch"):
        StackedBatches([sets[0], IndexedTensors(torch.zeros(9, 3), torch.zeros(9))], 2, [torch.Generator()] * 2)
