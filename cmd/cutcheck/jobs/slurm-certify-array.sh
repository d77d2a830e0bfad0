#!/bin/bash
# One recording's verification split into 8 parts, run as a Slurm job
# array: task i verifies part i (cutcheck reads SLURM_ARRAY_TASK_ID through
# --shard auto/8; the array must be numbered 0..N-1) and writes
# part-i-of-8.* under a shared directory, in a subdirectory named by the
# bundle's SHA-256. Submit it, then the merge (slurm-certify-merge.sh),
# which runs when every task has ended and fails, naming the part, if one
# has no result:
#
#   mkdir -p parts   # Slurm opens the log files before the script runs
#   jobid=$(sbatch --parsable cmd/cutcheck/jobs/slurm-certify-array.sh)
#   sbatch --dependency=afterany:$jobid cmd/cutcheck/jobs/slurm-certify-merge.sh
#
# A part that finished writes its result and exits 0, or 1 (a Reject among
# its keys) or 5 (Unsupported); this script ends the task COMPLETED in all
# three cases (the merge gives the verdict) and passes any other exit on.
#SBATCH --job-name=cutcheck-certify-parts
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --output=parts/part-%a.log
set -euo pipefail
mkdir -p parts
status=0
cutcheck certify bundle.jsonl \
  --shard auto/8 --shard-dir parts --mem 6GiB || status=$?
if [ "$status" -eq 1 ] || [ "$status" -eq 5 ]; then
  echo "part ${SLURM_ARRAY_TASK_ID-} met a failure among its keys; its result is written for the merge" >&2
  exit 0
fi
exit "$status"
