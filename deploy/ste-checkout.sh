#!/bin/sh
# ste-checkout REPO REF DIR — put DIR at commit REF of REPO, for a worker
# (ste-worker@.service's ExecStartPre=, the k8s init containers).
#
# REPO: a git URL (https://, ssh://, file://, a path). REF: a commit SHA,
# a branch or a tag. DIR is created as needed and reused: an existing
# checkout is fetched into, then forced to the commit, and cleaned of
# untracked and ignored files except .ste/ (the worker's test logs).
# Fetches only REF, at depth $STE_CHECKOUT_DEPTH (default 1; 0 = the whole
# history, which `ste record` needs to compute its MRI unless given --mri /
# $STE_MRI). A server that refuses to fetch a SHA it does not advertise
# gets a full fetch instead. Prints the commit checked out.
# Exit: 0 done; 1 git failed; 2 bad usage.
set -eu
if [ $# -ne 3 ] || [ -z "$1" ] || [ -z "$2" ] || [ -z "$3" ]; then
  echo "usage: ste-checkout REPO REF DIR" >&2
  exit 2
fi
repo=$1 ref=$2 dir=$3
depth=${STE_CHECKOUT_DEPTH:-1}
mkdir -p "$dir"
cd "$dir"
[ -d .git ] || git init -q .
if git remote get-url origin >/dev/null 2>&1; then
  git remote set-url origin "$repo"
else
  git remote add origin "$repo"
fi
if [ "$depth" = 0 ]; then
  set -- --no-tags
  [ -f .git/shallow ] && set -- "$@" --unshallow
else
  set -- --no-tags --depth "$depth"
fi
if git fetch -q "$@" origin "$ref"; then
  target=FETCH_HEAD
else
  echo "ste-checkout: fetching $ref alone failed; fetching every branch and tag" >&2
  git fetch -q --tags origin '+refs/heads/*:refs/remotes/origin/*' || exit 1
  target=$ref
  git rev-parse -q --verify "$target^{commit}" >/dev/null || target=origin/$ref
fi
git -c advice.detachedHead=false checkout -q --force --detach "$target" || exit 1
git clean -q -ffdx -e /.ste/ || exit 1
git rev-parse HEAD
