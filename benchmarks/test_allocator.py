"""Host memory: a language-model training step with freed tensors kept in the heap against glibc's own mmap.

The quick preset's step (vocabulary 4096, 256-token windows, batch 16, d=8, 4 layers) makes several 64 MiB tensors
(logits, log-softmax, their gradients). The baseline lets glibc map and unmap each of them every step (its default);
the candidate keeps freed memory in the heap, as every normbench run does (:mod:`normbench.training.allocator`).
One process, the allocator switched between the two; on the CPU.
"""

from __future__ import annotations

import pytest
import torch

from normbench.nn.gpt import GPTConfig
from normbench.tasks.base import OptimConfig
from normbench.tasks.lm import LMModule
from normbench.training.allocator import allow_mmap, glibc

VOCAB, CONTEXT, BATCH, STEPS = 4096, 256, 16, 6

pytestmark = pytest.mark.skipif(glibc() is None, reason="the allocator setting is glibc's (Linux)")


@pytest.fixture(scope="module")
def tokens() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, CONTEXT), generator=torch.Generator().manual_seed(0))


def train_steps(tokens: torch.Tensor) -> int:
    """STEPS AdamW steps of the quick LM on one batch (the loss the module trains on)."""
    torch.manual_seed(0)
    module = LMModule(GPTConfig(vocab_size=VOCAB, max_positions=CONTEXT, dropout=0.0), OptimConfig(lr=2e-3))
    optimizer = torch.optim.AdamW(module.parameters(), lr=2e-3)
    for _ in range(STEPS):
        loss, _ = module.next_token_loss(tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return STEPS


@pytest.mark.parametrize("heap", [False, True], ids=["glibc-mmap", "heap"])
def test_lm_step_host_memory(benchmark, record_pair, tokens, heap) -> None:  # noqa: ANN001
    assert allow_mmap(not heap)
    try:
        steps = benchmark.pedantic(train_steps, args=(tokens,), rounds=2, iterations=1, warmup_rounds=1)
    finally:
        allow_mmap(False)  # as every normbench run leaves it
    assert steps == STEPS
    record_pair(
        "LM step, host memory (quick preset, CPU)",
        "heap" if heap else "baseline",
        "freed tensors kept in the heap: faster than glibc's mmap per step",
        per=steps,
        tokens_per_step=BATCH * CONTEXT,
    )
