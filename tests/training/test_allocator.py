"""Host memory kept in the heap (normbench.training.allocator): the setting, its one-line error, and the same numbers."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from normbench.training.allocator import ENV, allow_mmap, glibc, keep_freed_memory

needs_glibc = pytest.mark.skipif(glibc() is None, reason="the allocator setting is glibc's (Linux)")


def test_the_setting_is_heap_unless_the_environment_says_system(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "system")
    assert keep_freed_memory() == "system"
    monkeypatch.setenv(ENV, "jemalloc")
    with pytest.raises(ValueError, match=r"^NORMBENCH_MALLOC: 'jemalloc' is not allowed; choose heap or system$"):
        keep_freed_memory()
    monkeypatch.delenv(ENV)
    assert keep_freed_memory() == ("heap" if glibc() is not None else "system")


def logits_step(seed: int) -> list[torch.Tensor]:
    """The gradients of a 64 MiB logits layer (4096 tokens x 4096 entries at d = 8), as a language model's loss
    makes them: every large tensor of the step is above glibc's mmap threshold."""
    gen = torch.Generator().manual_seed(seed)
    hidden = torch.randn(4096, 8, generator=gen, requires_grad=True)
    embedding = torch.randn(4096, 8, generator=gen, requires_grad=True)
    targets = torch.randint(0, 4096, (4096,), generator=gen)
    F.cross_entropy(hidden @ embedding.T, targets).backward()
    return [hidden.grad, embedding.grad]


@needs_glibc
def test_heap_memory_gives_the_same_numbers_as_glibcs_mmap() -> None:
    try:
        assert allow_mmap(True)
        mapped = [logits_step(seed) for seed in range(2)]
        assert allow_mmap(False)
        kept = [logits_step(seed) for seed in range(2)]
    finally:
        allow_mmap(False)  # as every normbench run leaves it
    for a, b in zip(mapped, kept, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
