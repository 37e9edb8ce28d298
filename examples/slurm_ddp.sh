#!/usr/bin/env bash
# One normbench run with Lightning DDP across 2 nodes x 4 GPUs. srun starts one process per GPU;
# Lightning's SLURM cluster environment reads the ranks from SLURM's variables (no re-launch).
#
#   sbatch examples/slurm_ddp.sh --model.arch.attn_norm.component project
#
# The per-GPU batch is data.init_args.batch_size: 8 processes at 750 train on the paper's 6000.
#SBATCH --job-name=normbench-ddp
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
srun .venv/bin/normbench fit --config tasks/majority.yaml --preset paper \
    --trainer.accelerator gpu --trainer.strategy ddp --trainer.devices 4 --trainer.num_nodes 2 \
    --data.init_args.batch_size 750 "$@"
