#!/usr/bin/env bash
# Fails if git tracks an executable binary (ELF, Mach-O, PE, or any file
# with a NUL byte in its first 8 KiB that is not an image or a known data
# format): build outputs never belong in the repository.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46) kind="ELF executable" ;;                      # \x7fELF
    cffaedfe|cefaedfe|feedfacf|feedface) kind="Mach-O binary" ;;
    4d5a*) kind="PE executable" ;;                          # MZ
    *) continue ;;
  esac
  echo "tracked binary: $f ($kind); remove it with 'git rm --cached $f' and ignore it in .gitignore" >&2
  bad=1
done < <(git ls-files -z)
exit $bad
