#!/usr/bin/env bash
# Run a command that reaches the network; when it fails, run it again after a
# pause, so a dropped connection or a short outage does not fail a long build.
# The command must be safe to repeat (a download into a folder, an install).
# Usage: scripts/with-retries.sh COMMAND [ARG...]
# TTE_RETRY_PAUSES: the pauses in seconds before each further attempt
# (default "20 60 180": four attempts in all; "" runs the command once).
# Exit status: the command's, from its last attempt.
set -uo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
read -r -a pauses <<<"${TTE_RETRY_PAUSES-20 60 180}"
for pause in "${pauses[@]}"; do
  [[ "$pause" =~ ^[0-9]+$ ]] || { echo "with-retries: TTE_RETRY_PAUSES has '$pause', not a number of seconds" >&2; exit 2; }
done
attempts=$((${#pauses[@]} + 1))
attempt=1
while :; do
  "$@"
  status=$?
  [ "$status" = 0 ] && exit 0
  if [ "$attempt" -ge "$attempts" ]; then
    [ "$attempts" -gt 1 ] && echo "with-retries: '$1' failed $attempts times (exit $status); giving up" >&2
    exit "$status"
  fi
  pause="${pauses[$((attempt - 1))]}"
  echo "with-retries: '$1' failed (exit $status, attempt $attempt of $attempts); trying again in $pause s" >&2
  sleep "$pause"
  attempt=$((attempt + 1))
done
