#!/usr/bin/env bash
# A sweep split across the hosts of a Slurm cluster: one array task per shard, each spreading its
# cases over the GPUs of its host; then one job merges the shard reports.
#
#   jid=$(sbatch --parsable --array=0-3 scripts/slurm-sweep.sh configs/llm-layers.json results)
#   sbatch --dependency=afterany:$jid --wrap \
#     "build/nvfp4bench merge results/llm-layers.json results/llm-layers.shard-*.json"
#
# The shard count is the array's size (--array=0-3: shards 0/4 .. 3/4). A task that hits its time
# limit gets SIGTERM from Slurm: the sweep kills the running case, writes its report and exits 130;
# with --requeue (or a second sbatch of the same array) --resume continues where it stopped.
#SBATCH --job-name=nvfp4-sweep
#SBATCH --gres=gpu:8
#SBATCH --exclusive
#SBATCH --time=04:00:00
#SBATCH --requeue
#SBATCH --output=nvfp4-sweep-%A_%a.out
set -euo pipefail
config=${1:?usage: sbatch --array=0-N scripts/slurm-sweep.sh CONFIG [OUTDIR]}
outdir=${2:-results}
count=${SLURM_ARRAY_TASK_COUNT:-1}
index=$(( ${SLURM_ARRAY_TASK_ID:-0} - ${SLURM_ARRAY_TASK_MIN:-0} ))
name=$(basename "$config" .json)
cd "${SLURM_SUBMIT_DIR:-.}"
mkdir -p "$outdir"
exec build/nvfp4bench sweep "$config" --shard "$index/$count" --devices all --resume \
  --json "$outdir/$name.shard-$index-of-$count.json" --progress lines
