#!/bin/bash
# Runs the split search of kubernetes-indexed-job.yaml on a Kubernetes
# cluster, or with the argument certify the split verification of
# kubernetes-certify-job.yaml: the parts' Indexed Job, then, once it has
# ended, the merge Job, whose log is the single run's report. The parts'
# Job fails when an index failed: a shard that found a violation (exit 1)
# or a part that met a failure (exit 1 or 5), its result written, or one
# out of retries or refused (no result). Either way the merge runs: it
# reports the merged verdict, or fails naming each part without a result.
# A merge Job that fails ends the script with a message, instead of a wait
# until a timeout.
#
#   cmd/cutcheck/jobs/kubernetes-run.sh [certify]
set -euo pipefail
here=$(dirname "$0")
parts=cutcheck-shards merge=cutcheck-merge
parts_yaml=kubernetes-indexed-job.yaml merge_yaml=kubernetes-merge-job.yaml
case "${1-}" in
  "") ;;
  certify)
    parts=cutcheck-certify-parts merge=cutcheck-certify-merge
    parts_yaml=kubernetes-certify-job.yaml merge_yaml=kubernetes-certify-merge-job.yaml ;;
  *) echo "usage: $0 [certify]" >&2; exit 2 ;;
esac

# finished JOB: wait until JOB has completed (exit 0) or failed (exit 1).
finished() {
  while :; do
    conds=$(kubectl get "job/$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
    case " $conds " in
      *" Complete "*) return 0 ;;
      *" Failed "*)
        echo "job $1 failed (failed indexes: $(kubectl get "job/$1" -o jsonpath='{.status.failedIndexes}')); see kubectl logs job/$1" >&2
        return 1 ;;
    esac
    sleep 20
  done
}

# The Jobs of an earlier run would keep their old state: start afresh.
kubectl delete job "$parts" "$merge" --ignore-not-found
kubectl apply -f "$here/$parts_yaml"
finished "$parts" || echo "merging what the parts wrote (a part that met a failure fails its index too, its result written)" >&2
kubectl apply -f "$here/$merge_yaml"
status=0
finished "$merge" || status=$?
kubectl logs "job/$merge"
exit "$status"
