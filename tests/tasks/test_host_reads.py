"""A training step reads nothing from the device: no ``.item()``, no ``if tensor``, no copy to the host.

On an accelerator each such read makes the host wait until the device has run everything queued,
so the step's kernels cannot be launched ahead. The loss is read on the steps that are logged
anyway (every ``log_every_n_steps``), the divergence guard reads its flag there too, metrics
accumulate on the device, and the majority data set is indexed where it lives.

On the CPU a read costs nothing, so normbench reads the divergence flag there at every step; these
tests make the CPU behave as an accelerator (``host_reads_are_free`` -> False) and trace every host
read of a tensor in Python. The one that stays is Adam's step counter, a CPU tensor by design (it is
not on the device). With a GPU, ``torch.cuda.set_sync_debug_mode("error")`` checks the real thing.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import lightning as L
import pytest
import torch
from torchmetrics import MeanMetric

import normbench.sweep.vectorized.seed_stack as seed_stack
import normbench.tasks.base as base
from normbench.data.batching import EpochBatchSampler, IndexedTensors, batch_loader, tensor_loader
from normbench.data.majority import MajorityDataModule
from normbench.tasks.base import OptimConfig, RunningMean, first_nonfinite_step
from normbench.tasks.majority import MajorityModule

LOG_EVERY = 25
HOST_READS = ("item", "__bool__", "__int__", "__float__", "__index__", "tolist", "numpy", "cpu")


@contextmanager
def traced_host_reads(reads: list[tuple[str, torch.Tensor, str]]) -> Iterator[None]:
    """Record every Python-level host read of a tensor (name, tensor, caller) while the block runs."""
    originals = {name: getattr(torch.Tensor, name) for name in HOST_READS}

    def wrap(name: str) -> Any:
        def read(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            frame = traceback.extract_stack(limit=3)[0]
            reads.append((name, self, f"{frame.filename}:{frame.lineno}"))
            return originals[name](self, *args, **kwargs)

        return read

    for name in HOST_READS:
        setattr(torch.Tensor, name, wrap(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)


class NonLoggingSteps(L.Callback):
    """Traces the host reads of whole steps that are not logged, from one step's start to the next one's (the
    batch's fetch, the step, Lightning's end-of-step bookkeeping), over steps after the first logged one."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, torch.Tensor, str]] = []
        self.traced: list[int] = []
        self._trace: Any = None

    def on_train_batch_start(self, trainer: L.Trainer, module: L.LightningModule, batch: Any, batch_idx: int) -> None:
        if self._trace is not None:
            self._trace.__exit__(None, None, None)
            self._trace = None
        step = trainer.global_step
        if (
            1 <= step < 3 * LOG_EVERY and (step + 1) % LOG_EVERY and (step + 2) % LOG_EVERY
        ):  # this step, and the next one
            self.traced.append(step)
            self._trace = traced_host_reads(self.reads)
            self._trace.__enter__()

    def on_train_end(self, trainer: L.Trainer, module: L.LightningModule) -> None:
        if self._trace is not None:
            self._trace.__exit__(None, None, None)
            self._trace = None


@pytest.fixture
def as_on_an_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "host_reads_are_free", lambda device: False)
    monkeypatch.setattr(seed_stack, "host_reads_are_free", lambda device: False)


def fit_majority(
    callbacks: list[L.Callback], lr: float = 1e-3, steps: int = LOG_EVERY + 5, accelerator: str = "cpu"
) -> tuple[MajorityModule, L.Trainer]:
    torch.manual_seed(0)
    module = MajorityModule(optim=OptimConfig(lr=lr))
    data = MajorityDataModule(num_sequences=10_000, batch_size=64, eval_batch_size=500)  # epochs of 125 steps
    trainer = L.Trainer(
        max_steps=steps,
        log_every_n_steps=LOG_EVERY,
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=True,
        enable_model_summary=False,
        accelerator=accelerator,
        devices=1,
        callbacks=callbacks,
    )
    trainer.fit(module, data)
    return module, trainer


def adam_step_counters(trainer: L.Trainer) -> set[int]:
    return {id(state["step"]) for opt in trainer.optimizers for state in opt.state.values()}


def test_a_training_step_reads_nothing_from_the_device(as_on_an_accelerator: None) -> None:
    watch = NonLoggingSteps()
    _, trainer = fit_majority([watch], steps=3 * LOG_EVERY + 2)
    counters = adam_step_counters(trainer)
    assert LOG_EVERY in watch.traced and 2 * LOG_EVERY + 5 in watch.traced  # after a logged step too
    assert watch.reads, "the trace saw nothing: it is not tracing"
    others = [(name, where) for name, tensor, where in watch.reads if id(tensor) not in counters]
    assert others == []


def test_the_data_set_is_indexed_in_place_by_the_sampler() -> None:
    data = IndexedTensors(torch.arange(30).reshape(10, 3), torch.arange(10))
    loader = tensor_loader(data, 4, shuffle=True)
    torch.manual_seed(5)
    batches = list(loader)
    torch.manual_seed(5)
    as_lists = list(batch_loader(data, 4, shuffle=True))  # a sampler that yields lists of ints
    assert isinstance(loader.batch_sampler, EpochBatchSampler) and loader.batch_sampler.device == torch.device("cpu")
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    for (x, y), (x_list, y_list) in zip(batches, as_lists, strict=False):
        assert torch.equal(x, x_list) and torch.equal(y, y_list)
    assert data.to("cpu") is data


def test_divergence_read_late_still_names_the_first_bad_step(as_on_an_accelerator: None) -> None:
    module, trainer = fit_majority([], lr=1e30, steps=200)
    assert module.diverged_at is not None
    first = module.diverged_at
    assert first < LOG_EVERY - 1  # diverges within the first logging interval ...
    assert trainer.global_step == LOG_EVERY  # ... and stops at the first step that reads the flag


def test_divergence_is_read_at_every_step_on_the_cpu() -> None:
    module, trainer = fit_majority([], lr=1e30, steps=200)
    assert trainer.global_step == module.diverged_at + 1


def test_first_nonfinite_step_keeps_the_first() -> None:
    first = first_nonfinite_step(torch.tensor([1.0, float("nan"), 2.0]), 3, None)
    first = first_nonfinite_step(torch.tensor([float("inf"), float("nan"), 2.0]), 4, first)
    assert first.tolist() == [4, 3, -1]


def test_running_mean_is_the_weighted_mean_without_host_reads() -> None:
    mean, reads = RunningMean(), []
    with traced_host_reads(reads):
        mean.update(torch.tensor(2.0), weight=3)
        mean.update(torch.tensor(float("nan")), weight=5)  # left out, as torchmetrics' MeanMetric leaves it out
        mean.update(torch.tensor(4.0), weight=1)
    assert reads == [] and mean.compute().item() == pytest.approx(2.5)


def test_running_mean_sums_as_torchmetrics_does() -> None:
    ours, theirs = RunningMean(), MeanMetric()
    for value, weight in ((0.1234567, 256), (3.3333333, 256), (float("nan"), 256), (2.7182818, 113)):
        ours.update(torch.tensor(value), weight=weight)
        theirs.update(torch.tensor(value), weight=weight)
    assert ours.compute().item() == theirs.compute().item()


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_no_host_sync_in_a_cuda_training_step() -> None:
    class SyncIsError(L.Callback):
        def on_train_batch_start(self, trainer: L.Trainer, *args: Any) -> None:
            torch.cuda.synchronize()  # what Lightning did before this step may read; the step may not
            torch.cuda.set_sync_debug_mode("error" if 1 <= trainer.global_step < LOG_EVERY - 1 else "default")

        def on_train_batch_end(self, *args: Any) -> None:
            torch.cuda.set_sync_debug_mode("default")

    try:
        fit_majority([SyncIsError()], accelerator="gpu")
    finally:
        torch.cuda.set_sync_debug_mode("default")
