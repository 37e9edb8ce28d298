#!/usr/bin/env bash
# One normbench run with DDP started by torchrun (Lightning's TorchElastic environment).
#
#   examples/torchrun_ddp.sh                       # this machine: 2 processes (gloo on CPU, NCCL on GPUs)
#   NNODES=2 NODE_RANK=0 MASTER=host0:29500 examples/torchrun_ddp.sh    # on host0, and NODE_RANK=1 on host1
#
# NPROC processes per node at batch 32 each train what one process trains at batch 32 x NPROC x NNODES.
set -euo pipefail
NPROC=${NPROC:-2}
NNODES=${NNODES:-1}
ACCEL=$(.venv/bin/python -c "import torch; print('gpu' if torch.cuda.is_available() else 'cpu')")
exec .venv/bin/torchrun --nproc_per_node "$NPROC" --nnodes "$NNODES" --node_rank "${NODE_RANK:-0}" \
    --rdzv_backend c10d --rdzv_endpoint "${MASTER:-localhost:29500}" \
    -m normbench fit --config tasks/majority.yaml --preset quick \
    --trainer.accelerator "$ACCEL" --trainer.strategy ddp --trainer.devices "$NPROC" --trainer.num_nodes "$NNODES" \
    --data.init_args.batch_size 32 "$@"
