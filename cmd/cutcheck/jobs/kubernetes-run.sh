#!/bin/bash
# Runs the split search of kubernetes-indexed-job.yaml on a Kubernetes
# cluster: the shards' Indexed Job, then, once it has ended, the merge Job,
# whose log is the single-run report. The shards' Job fails when an index
# failed: a shard that found a violation (exit 1, its result written) or one
# out of retries or refused (no result). Either way the merge runs: it
# reports the merged verdict, or fails naming each shard without a result.
# A merge Job that fails ends the script with a message, instead of a wait
# until a timeout.
#
#   cmd/cutcheck/jobs/kubernetes-run.sh
set -euo pipefail
here=$(dirname "$0")

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
kubectl delete job cutcheck-shards cutcheck-merge --ignore-not-found
kubectl apply -f "$here/kubernetes-indexed-job.yaml"
finished cutcheck-shards || echo "merging what the shards wrote (a shard that found a violation fails its index too, its result written)" >&2
kubectl apply -f "$here/kubernetes-merge-job.yaml"
status=0
finished cutcheck-merge || status=$?
kubectl logs job/cutcheck-merge
exit "$status"
