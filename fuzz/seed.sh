#!/bin/sh
# Seeds fuzz/corpus/parse (gitignored) for the `parse` target.
#
# The committed hand-written seeds in fuzz/seeds/parse/ are always copied.
# When /work/main/datasets/ (or the directory given as $1) exists, every
# non-empty line of every file in it becomes one seed too, capped so a big
# dataset does not swamp the fuzzer (libFuzzer's -merge keeps only inputs
# that add coverage anyway).
#
# Usage, from the repository root:
#   fuzz/seed.sh [datasets-dir]
#   cargo +nightly fuzz run parse fuzz/corpus/parse -- -max_total_time=300
set -eu

here=$(cd "$(dirname "$0")" && pwd)
datasets=${1:-"$here/../datasets"}
corpus="$here/corpus/parse"
max_lines=${MAX_SEED_LINES:-20000}

mkdir -p "$corpus"
cp "$here"/seeds/parse/* "$corpus"/

if [ -d "$datasets" ]; then
    # One file per line, named by content hash so reruns do not duplicate.
    find "$datasets" -type f -print0 | xargs -0 cat | grep -a -v '^$' | head -n "$max_lines" |
        while IFS= read -r line; do
            name=$(printf '%s' "$line" | sha1sum | cut -c1-16)
            printf '%s' "$line" > "$corpus/ds-$name"
        done
fi
echo "$(ls "$corpus" | wc -l) seeds in $corpus"
