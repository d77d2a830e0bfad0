#!/bin/bash
# The merge of slurm-certify-array.sh's 8 parts: the parts' own command
# with --shard merge/8, so it merges exactly that bundle's parts. Submit
# it with --dependency=afterany on the array (see slurm-certify-array.sh).
#SBATCH --job-name=cutcheck-certify-merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --output=parts/merge.log
set -euo pipefail
exec cutcheck certify bundle.jsonl \
  --shard merge/8 --shard-dir parts
