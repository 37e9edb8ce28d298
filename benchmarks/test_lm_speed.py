"""LM training throughput: normbench's Lightning pipeline against HF ``GPT2LMHeadModel``.

Both train the same GPT-2 configuration (the quick preset's: vocabulary 4096, 256-token
windows, batch 16, d=8, 4 layers, 4 heads) on the same token blocks for the same number of
AdamW steps with gradient clipping at 1.0, once without dropout (quick preset) and once with
GPT-2's 0.1 (paper). The baseline is the authors' route: the HF model built from a config (no
download) in a plain PyTorch loop, loss from ``model(input_ids, labels=input_ids)``.
Reported per step and as tokens/s, both on the CPU.
"""

from __future__ import annotations

import lightning as L
import pytest
import torch

from normbench.data.batching import IndexedTensors, tensor_loader
from normbench.nn.gpt import GPTConfig
from normbench.tasks.base import OptimConfig
from normbench.tasks.lm import LMModule

transformers = pytest.importorskip("transformers")

VOCAB, CONTEXT, BATCH, STEPS = 4096, 256, 16, 12
TOKENS_PER_STEP = BATCH * CONTEXT


@pytest.fixture(scope="module")
def blocks() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH * STEPS, CONTEXT), generator=torch.Generator().manual_seed(0))


def normbench_train(blocks: torch.Tensor, dropout: float) -> int:
    module = LMModule(
        GPTConfig(vocab_size=VOCAB, max_positions=CONTEXT, dropout=dropout), OptimConfig(lr=2e-3, lr_decay_steps=STEPS)
    )
    trainer = L.Trainer(
        max_steps=STEPS,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        limit_val_batches=0,
        gradient_clip_val=1.0,
        log_every_n_steps=10,
    )
    trainer.fit(module, train_dataloaders=tensor_loader(IndexedTensors(blocks), BATCH, shuffle=True))
    return trainer.global_step


def hf_train(blocks: torch.Tensor, dropout: float) -> int:
    config = transformers.GPT2Config(
        vocab_size=VOCAB,
        n_positions=CONTEXT,
        n_embd=8,
        n_layer=4,
        n_head=4,
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
    )
    model = transformers.GPT2LMHeadModel(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / STEPS))
    loader = torch.utils.data.DataLoader(blocks, batch_size=BATCH, shuffle=True)
    steps = 0
    for input_ids in loader:
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()  # the HF Trainer reads the loss every step for logging
        steps += 1
    return steps


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["quick-dropout0", "paper-dropout0.1"])
def test_hf_gpt2(benchmark, record_pair, blocks, dropout) -> None:  # noqa: ANN001
    steps = benchmark.pedantic(hf_train, args=(blocks, dropout), rounds=2, iterations=1, warmup_rounds=1)
    assert steps == STEPS
    record_pair(
        f"LM training per step (dropout {dropout})",
        "baseline",
        "HF GPT2LMHeadModel loop; report tokens/s",
        per=steps,
        tokens_per_step=TOKENS_PER_STEP,
    )


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["quick-dropout0", "paper-dropout0.1"])
def test_normbench_lm(benchmark, record_pair, blocks, dropout) -> None:  # noqa: ANN001
    steps = benchmark.pedantic(normbench_train, args=(blocks, dropout), rounds=2, iterations=1, warmup_rounds=1)
    assert steps == STEPS
    record_pair(
        f"LM training per step (dropout {dropout})", "normbench (Lightning)", per=steps, tokens_per_step=TOKENS_PER_STEP
    )
