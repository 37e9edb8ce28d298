#!/usr/bin/env bash
# A normbench sweep as a SLURM job array: one task per shard, one GPU each, then the leaderboard.
#
#   sbatch --array=0-7 examples/slurm_sweep.sh                  # 8 shards of the sweep
#   sbatch --dependency=afterok:<array job id> --wrap \
#       ".venv/bin/normbench sweep --config tasks/majority.yaml --preset paper --seeds 0-9 --workers 1"
#
# The second command finds every run finished and only writes results/majority/. A shard that is
# pre-empted or killed is resubmitted as is: finished runs are skipped, the interrupted one resumes
# from its last checkpoint. Runs must write to a file system all nodes share (--runs_dir).
#SBATCH --job-name=normbench-sweep
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
exec .venv/bin/normbench sweep --config tasks/majority.yaml --preset paper --seeds 0-9 \
    --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" --no-progress \
    --trainer.accelerator gpu --trainer.devices 1 "$@"
