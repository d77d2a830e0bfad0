#!/bin/bash
# One search split into 8 shards, run as a Slurm job array: task i runs shard
# i (cutcheck reads SLURM_ARRAY_TASK_ID through --shard auto/8; the array
# must be numbered 0..N-1) and, once its shard has finished, writes
# shard-i-of-8.json under a shared directory, in a subdirectory named by the
# search's identity. Submit it, then the merge (slurm-merge.sh), which runs
# when every task has ended and fails, naming the shard, if one has no
# result:
#
#   mkdir -p shards   # Slurm opens the log files before the script runs
#   jobid=$(sbatch --parsable cmd/cutcheck/jobs/slurm-array.sh)
#   sbatch --dependency=afterany:$jobid cmd/cutcheck/jobs/slurm-merge.sh
#
# A shard that finished writes its result file and exits 0, or 1 if it
# holds a violation; this script ends the task COMPLETED either way (the
# merge reports the verdict) and passes any other exit on. A preempted or
# requeued task continues from its checkpoint (--dir, --resume).
#SBATCH --job-name=cutcheck-shards
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --requeue
#SBATCH --output=shards/shard-%a.log
set -euo pipefail
mkdir -p shards
status=0
cutcheck run specs/large/parallel-6.json \
  --shard auto/8 --shard-dir shards --dir shards/work --resume \
  --mem 6GiB --workers "${SLURM_CPUS_PER_TASK:-2}" --progress 60s || status=$?
if [ "$status" -eq 1 ]; then
  echo "shard ${SLURM_ARRAY_TASK_ID-} holds a violation; its result is written for the merge" >&2
  exit 0
fi
exit "$status"
