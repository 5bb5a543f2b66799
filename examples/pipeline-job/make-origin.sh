#!/bin/sh
# The setup step plays the git server: it makes $STATE/origin.git, a bare
# repository whose main branch holds project/ as its first commit. With
# PIPELINE_BUG=1 a second commit breaks the program, so the test step fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$STATE/origin.git" "$STATE/seed" "$STATE/workspace"
git init -q --bare --initial-branch=main "$STATE/origin.git"
cp -R "$here/project" "$STATE/seed"
cd "$STATE/seed"
commit() { git -c user.name=podvisor -c user.email=podvisor@localhost commit -q "$@"; }
git init -q --initial-branch=main
git add -A
commit -m "wordcount: first version"
if [ "${PIPELINE_BUG:-0}" = 1 ]; then
  sed -i 's/wc -w/wc -l/' src/wordcount.sh
  commit -a -m "wordcount: count lines, it is faster"
fi
git push -q "$STATE/origin.git" main
git log --oneline
rm -rf "$STATE/seed"
