#!/bin/bash
# The merge of slurm-array.sh's 8 shards: the shards' own command with
# --shard merge/8, so it merges exactly that search's results. Submit it
# with --dependency=afterany on the array (see slurm-array.sh).
#SBATCH --job-name=cutcheck-merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --output=shards/merge.log
set -euo pipefail
exec cutcheck run specs/large/parallel-6.json \
  --shard merge/8 --shard-dir shards
