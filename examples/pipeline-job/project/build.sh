#!/bin/sh
# Build step: "compiles" each src/NAME.sh into the program dist/NAME, a
# stand-in for a real compiler.
set -eu
cd "$(dirname "$0")"
rm -rf dist
mkdir dist
commit=$(git rev-parse --short HEAD)
for src in src/*.sh; do
  prog=dist/$(basename "$src" .sh)
  echo "compiling $src -> $prog"
  { echo '#!/bin/sh'; echo "# built from $src at $commit"; sed 1d "$src"; } >"$prog"
  chmod +x "$prog"
done
echo "build ok at $commit"
