"""How a sweep of stacked seeds uses its devices: the stack size K and the number of concurrent stacks.

On a GPU a step of the small models here is launch-bound, not arithmetic-bound: K seeds stacked into one
model (:mod:`normbench.sweep.vectorized`) take about one step's launches for K steps of work, and a few
stack processes per GPU overlap their host work. Memory is the limit. :func:`seed_step_bytes` estimates the
memory one seed's training step holds from the config alone; :func:`plan_stacks` then puts every seed of
a variant into one stack where it fits, and runs as many stacks per GPU as fit, at most
``MAX_STACKS_PER_GPU``. On the CPU every kernel is already busy: stacking pays only at small batches
(``results/perf``: 10 seeds at batch 256 take 0.61x the time of 10 lone runs, at batch 4096 1.8x), so seeds
are stacked up to a batch of ``CPU_STACK_MAX_BATCH`` rows per seed and the stacks run one per core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from normbench.io import Config

MAX_STACKS_PER_GPU = 4  # one H100, lone runs: 3 processes gave 180 steps/s in all, 6 gave 205 (issue numbers)
GPU_MEMORY_SHARE = 0.8  # of each GPU's memory, what the plan may fill
SAFETY = 2.0  # the estimate's margin for the backward pass's temporaries and the allocator's rounding
CPU_STACK_MAX_BATCH = 1024  # above it a stack is no faster on the CPU than lone runs (results/perf)
FLOAT_BYTES = 4


@dataclass(frozen=True)
class StackPlan:
    """Stacks of ``stack_size`` seeds, ``workers`` of them at once (over ``gpus``, or CPU cores without)."""

    stack_size: int
    workers: int
    seed_bytes: int
    gpus: tuple[int, ...]
    gpu_bytes: tuple[int, ...]
    stacks: int

    def describe(self) -> str:
        where = (
            (
                f"{len(self.gpus)} GPU(s) of {min(self.gpu_bytes) / 2**30:.0f} GiB, "
                f"{math.ceil(self.workers / len(self.gpus))} stack(s) per GPU"
            )
            if self.gpus
            else "the CPU"
        )
        return (
            f"{self.stacks} stack(s) of up to {self.stack_size} seeds, {self.workers} at a time on {where}; "
            f"about {self.seed_bytes / 2**20:.0f} MiB per seed's step (estimated from the config)"
        )


def seed_step_bytes(config: Config) -> int:
    """Estimated memory of one seed's training step: what the backward pass keeps per token (norm inputs and
    outputs, q/k/v, attention scores and weights over the sequence for each head, the feed-forward hidden
    layer, the logits), times tokens per step, times ``SAFETY``; plus parameters, gradients and Adam state."""
    arch = ((config.get("model") or {}).get("init_args") or {}).get("arch") or {}
    data = (config.get("data") or {}).get("init_args") or {}
    d, f, heads = (
        int(arch.get("d_model", 8)),
        int(arch.get("ffn_width", 4 * arch.get("d_model", 8))),
        int(arch.get("n_heads", 1)),
    )
    layers, classes = int(arch.get("n_layers", 1)), int(arch.get("num_classes", arch.get("vocab_size", 2)))
    seq = int(data.get("seq_len") or data.get("context") or data.get("max_length") or 1)  # majority, lm, sst2
    batch = int(data.get("batch_size", 1))
    per_token = layers * (12 * d + 2 * f + 2 * heads * seq) + 2 * classes + d
    params = layers * (4 * d * d + 2 * d * f + 6 * d + f) + classes * d
    return int(FLOAT_BYTES * (SAFETY * batch * seq * per_token + 4 * params))


def gpu_memory(gpus: list[int]) -> list[int]:
    """Total memory of each of ``gpus`` (bytes), as CUDA reports it."""
    return [torch.cuda.get_device_properties(g).total_memory for g in gpus]


def plan_stacks(
    seeds_per_variant: int,
    variants: int,
    seed_bytes: int,
    gpus: list[int] | None = None,
    gpu_bytes: list[int] | None = None,
    batch_size: int = 1,
    cpu_workers: int = 1,
    stackable: bool = True,
) -> StackPlan:
    """The stack size and concurrency for ``variants`` x ``seeds_per_variant`` runs.

    GPUs: K = all seeds of a variant if K x ``seed_bytes`` fits ``GPU_MEMORY_SHARE`` of the smallest GPU (else
    as many as fit, at least 1); stacks per GPU = as many as fit, at most ``MAX_STACKS_PER_GPU`` and no more than
    there are stacks to share. CPU: K = all seeds of a variant at batches up to ``CPU_STACK_MAX_BATCH``, else 1;
    one stack per worker (core). A task whose module cannot be stacked (``stackable`` false) gets K = 1: lone
    runs, one per GPU or per core.
    """
    if seeds_per_variant < 1 or variants < 1:
        raise ValueError(f"vectorize: nothing to plan ({variants} variants x {seeds_per_variant} seeds)")
    if gpus:
        gpu_bytes = gpu_bytes or gpu_memory(gpus)
    if not stackable:
        runs = variants * seeds_per_variant
        workers = len(gpus) if gpus else max(1, min(cpu_workers, runs))
        return StackPlan(1, workers, seed_bytes, tuple(gpus or ()), tuple(gpu_bytes or ()), runs)
    if gpus:
        assert gpu_bytes
        budget = GPU_MEMORY_SHARE * min(gpu_bytes)
        stack = max(1, min(seeds_per_variant, int(budget // max(1, seed_bytes))))
        stacks = variants * math.ceil(seeds_per_variant / stack)
        fit = max(1, int(budget // max(1, stack * seed_bytes)))
        per_gpu = max(1, min(MAX_STACKS_PER_GPU, fit, math.ceil(stacks / len(gpus))))
        return StackPlan(stack, per_gpu * len(gpus), seed_bytes, tuple(gpus), tuple(gpu_bytes), stacks)
    stack = seeds_per_variant if batch_size <= CPU_STACK_MAX_BATCH else 1
    stacks = variants * math.ceil(seeds_per_variant / stack)
    return StackPlan(stack, max(1, min(cpu_workers, stacks)), seed_bytes, (), (), stacks)
