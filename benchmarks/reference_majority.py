"""A plain-PyTorch majority training loop written the way the paper's script is.

TensorDataset + DataLoader(shuffle=True), ``nn.TransformerEncoderLayer`` (pre-norm, d=8, 1 head,
FFN 8, ReLU, no dropout), logits = h @ E^T, Adam + linear decay, ``loss.item()`` bookkeeping every
step and a full test pass after every epoch. Used only as the speed baseline of ``bench-perf``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class ReferenceMajority(nn.Module):
    def __init__(self, num_classes: int = 20, d: int = 8) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_classes, d)
        self.layer = nn.TransformerEncoderLayer(
            d,
            1,
            dim_feedforward=d,
            dropout=0.0,
            activation="relu",
            batch_first=True,
            norm_first=True,
            layer_norm_eps=0.0,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(self.embedding(x)) @ self.embedding.weight.T


def reference_train(
    data: dict[str, torch.Tensor],
    epochs: int,
    batch_size: int = 6000,
    lr: float = 1e-3,
    device: str | torch.device = "cpu",
) -> int:
    """Train ``epochs`` epochs on ``device`` (each batch copied there, as the authors' script does); returns the
    number of optimizer steps taken."""
    model = ReferenceMajority().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    train = DataLoader(TensorDataset(data["train_x"], data["train_y"]), batch_size=batch_size, shuffle=True)
    test = DataLoader(TensorDataset(data["test_x"], data["test_y"]), batch_size=batch_size)
    sched = torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.0, total_iters=10_000 * len(train))
    steps, history = 0, []
    for _ in range(epochs):
        model.train()
        for x, y in train:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits.flatten(0, 1), y[:, None].expand_as(x).flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            history.append(loss.item())
            steps += 1
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for x, y in test:
                x, y = x.to(device), y.to(device)
                pred = model(x).argmax(-1)
                correct += (pred == y[:, None]).sum().item()
                total += pred.numel()
        history.append(correct / total)
    return steps
