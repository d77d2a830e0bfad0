#!/bin/bash
# One search split into 8 shards, run as a Slurm job array: task i runs shard
# i (cutcheck reads SLURM_ARRAY_TASK_ID through --shard auto/8; the array
# must be numbered 0..N-1) and writes shard-i-of-8.json to a shared
# directory. Submit it, then the merge, which runs once every task succeeded:
#
#   mkdir -p shards   # Slurm opens the log files before the script runs
#   jobid=$(sbatch --parsable cmd/cutcheck/jobs/slurm-array.sh)
#   sbatch --dependency=afterok:$jobid --wrap "cutcheck merge $PWD/shards"
#
# A shard exits 0 whatever its verdict (the verdict is in its result file).
#SBATCH --job-name=cutcheck-shards
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --output=shards/shard-%a.log
set -euo pipefail
mkdir -p shards
exec cutcheck run specs/large/parallel-6.json \
  --shard auto/8 --shard-dir shards \
  --mem 6GiB --workers "${SLURM_CPUS_PER_TASK:-2}" --progress 60s
