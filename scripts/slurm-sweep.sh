#!/usr/bin/env bash
# A sweep split across the hosts of a Slurm cluster: one array task per shard, each spreading its
# cases over the GPUs of its host; then one job merges the shard reports (docs/slurm.md).
# Submit from the repository root (the tool is build/nvfp4bench there):
#
#   jid=$(sbatch --parsable --array=0-3 scripts/slurm-sweep.sh configs/llm-layers.json results)
#   sbatch --dependency=afterany:$jid --output=nvfp4-merge-%j.out --wrap \
#     "build/nvfp4bench merge results/llm-layers.json results/llm-layers.shard-*-of-4.json"
#
# Nodes without GPUs (the host backend): add --gres=none to the first sbatch (it cancels the
# --gres line below); nodes with another GPU count: --gres=gpu:4 and so on.
#
# The shard count is the array's size (--array=0-3, or 1-4: shards 0/4 .. 3/4); the array must be
# a range with one step (0-6:2 works too, a list like 0,2,5 does not).
# Time limits: 2 minutes before the limit Slurm sends SIGTERM to this script (--signal=B:TERM@120),
# which passes it on to the sweep as SIGINT; the sweep kills the running case (not recorded),
# writes its report with the finished cases and exits 130; this script then requeues the task
# (scontrol requeue: Slurm itself requeues nothing at a time limit) and the next run's --resume
# runs only the cases not yet recorded. A run that finished no case is not requeued (a case
# longer than the time limit would loop forever): raise --time and sbatch again.
#SBATCH --job-name=nvfp4-sweep
#SBATCH --gres=gpu:8
#SBATCH --exclusive
#SBATCH --time=04:00:00
#SBATCH --signal=B:TERM@120
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=nvfp4-sweep-%A_%a.out
set -euo pipefail
if (( $# < 1 || $# > 2 )); then  # bad usage: exit 2, as the tool's own (docs/errors.md)
  echo "usage: sbatch --array=0-N scripts/slurm-sweep.sh CONFIG [OUTDIR] (docs/slurm.md)" >&2
  exit 2
fi
config=$1
outdir=${2:-results}
count=${SLURM_ARRAY_TASK_COUNT:-1}
step=${SLURM_ARRAY_TASK_STEP:-1}
min=${SLURM_ARRAY_TASK_MIN:-0}
if (( ${SLURM_ARRAY_TASK_MAX:-0} - min != (count - 1) * step )); then
  echo "slurm-sweep.sh: the array must be a range like --array=0-$((count - 1)) (tasks ${min}..${SLURM_ARRAY_TASK_MAX:-0}, step $step, $count tasks)" >&2
  exit 2
fi
index=$(( (${SLURM_ARRAY_TASK_ID:-0} - min) / step ))
name=$(basename "$config" .json)
cd "${SLURM_SUBMIT_DIR:-.}"
mkdir -p "$outdir"
report=$outdir/$name.shard-$index-of-$count.json
records=${report%.json}.jsonl
recorded() {  # finished cases in the records (their first line is a header)
  local lines=0
  [[ -f $records ]] && lines=$(wc -l <"$records")
  echo $((lines > 1 ? lines - 1 : 0))
}
before=$(recorded)
echo "slurm-sweep.sh: job ${SLURM_JOB_ID:-none} (array task ${SLURM_ARRAY_TASK_ID:-none}, run $((${SLURM_RESTART_COUNT:-0} + 1))): shard $index/$count on $(hostname -s)"

# SIGTERM to this shell (Slurm's --signal=B:, scancel --batch) goes on to the sweep as SIGINT: a
# second SIGTERM would end the sweep at once, and at a hard time limit (or scancel --full) Slurm
# has signalled the sweep too. Bash's wait returns when the trap runs: wait again.
sweep=
trap 'echo "slurm-sweep.sh: SIGTERM: stopping the sweep"; [[ -z $sweep ]] || kill -INT "$sweep" 2>/dev/null || true' TERM
build/nvfp4bench sweep "$config" --shard "$index/$count" --devices all --resume \
  --json "$report" --progress lines &
sweep=$!
while ! wait "$sweep"; do kill -0 "$sweep" 2>/dev/null || break; done
rc=0
wait "$sweep" || rc=$?
if (( rc == 130 )) && [[ -n ${SLURM_JOB_ID:-} ]]; then
  after=$(recorded)
  if (( after > before )); then
    # This task by its array name: the last task's SLURM_JOB_ID is the array's own id, and
    # requeueing that would requeue every task of the array, finished ones too.
    task=$SLURM_JOB_ID
    [[ -n ${SLURM_ARRAY_JOB_ID:-} ]] && task=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
    echo "slurm-sweep.sh: interrupted after $((after - before)) more cases: requeueing job $task"
    scontrol requeue "$task" || echo "slurm-sweep.sh: requeue refused: sbatch the same array again (--resume)" >&2
  else
    echo "slurm-sweep.sh: interrupted before any case finished: not requeued (raise --time)" >&2
  fi
fi
exit "$rc"
