#!/usr/bin/env bash
# benches/compare.sh — urnscan against the memory-read floor and against the
# usual command-line answers (ripgrep, GNU grep, sort), on three workloads
# made by the project's own generator:
#
#   (a) text:    1 GiB of log/JSON/XML/prose text, 200 URNs per MiB (sparse:
#                the candidate search dominates)
#   (b) dense:   256 MiB of the same text at 5000 URNs per MiB (validation
#                and deduplication dominate)
#   (c) dataset: 10M lines, one URN per line, 3M distinct keys
#
# Every workload is first checked against the generator's ground truth (the
# URNs urnscan reports are exactly the planted ones, offset by offset, and
# the unique/valid counts match), then timed, with the file read into the
# page cache again before every run (hyperfine's --prepare): on some
# machines the cache is dropped from outside between runs, and a run that
# reads the disk measures the disk. One table is printed at the end (and
# written to DIR/results.md):
#
#   median time (hyperfine, or a /usr/bin/time loop), GB/s, million URNs (or
#   lines) per second, ratio to the floor, ratio to the fastest urnscan row
#   of the workload that lists or deduplicates (not `scan --count`, which
#   only counts, as `rg -c` does: compare those two rows with each other),
#   peak RSS (one separate /usr/bin/time -v run).
#
# Below the table: the load while timing (and how much of the page cache is
# in huge folios), the huge-page setting, and the machine (CPU model, family
# and model number, CPUs, memory, kernel), the search kernel urnscan picked,
# the date, urnscan's version and commit and the peers' versions, so that a
# pasted table says what it ran on.
#
# The floor comes two ways. The floor process, `urnscan bench --floor --once`
# (map the file, read every byte, unmap, exit), is timed like every other
# row, so "x floor" compares whole processes, median with median. The
# in-process floor, `urnscan bench --floor` (the same work, best of 5 inside
# one process, no start-up), is the best case; "x floor in-process" is
# against it. urnscan rows are compared with the floor at their own thread
# count, the other tools with the 1-thread floor (grep and rg search one file
# on one thread; sort -u may use more).
#
# Notes on fairness: the peers answer a different, looser question (a regex
# match, no RFC validation, no equivalence, no punctuation trimming), so
# their distinct counts differ; the table shows each command's output lines.
# Peak RSS counts the page-cache pages a process maps (urnscan and rg map the
# file), so for mapping tools it includes up to the file size.
#
# Nothing is installed: missing peers (rg, GNU grep, hyperfine) are skipped
# with a note on how to get them. Needed: jq and GNU time at /usr/bin/time
# (`apt-get install jq time`), and about 1.7 GB free in DIR for the default
# sizes. It builds urnscan first (`cargo build --release`) unless
# --no-build, or URNSCAN_BIN=PATH names the binary to time (one installed
# with `cargo install`). With the defaults and --runs 7 it takes about five
# minutes on a 2-CPU machine.
#
# Usage: benches/compare.sh [--dir DIR] [--size 1GiB] [--dense-size 256MiB]
#          [--lines 10000000] [--distinct 3000000] [--runs 3] [--threads 2]
#          [--only a,b,c] [--no-build] [--no-full-check]
set -euo pipefail

dir=/tmp/urnscan-bench
size=1GiB
dense_size=256MiB
lines=10000000
distinct=3000000
runs=3
threads=2
only=a,b,c
build=1
full_check=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --dir) dir=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --dense-size) dense_size=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --distinct) distinct=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --no-full-check) full_check=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
note() { echo "compare.sh: $*" >&2; }
die() { note "$*"; exit 1; }
wants() { [[ ,$only, == *,$1,* ]]; }

# The machine, the date and the versions of everything timed, one line each.
# Best effort: a tool that is missing or fails leaves its part out (each
# substitution ends in `|| true`, as set -e and pipefail would stop here).
describe_run() {
    local cpu model mem search commit peers=() joined
    first_line() { "$@" 2>/dev/null | sed -n 1p || true; }
    cpu=$( (lscpu 2>/dev/null || true) | sed -n 's/^Model name: *//p' | sed -n 1p || true)
    # A guest's model name can be as vague as "Intel(R) Xeon(R) Processor";
    # the family and model tell such machines apart.
    model=$( (lscpu 2>/dev/null || true) | awk -F: '
        /^CPU family:/ { gsub(/ /, "", $2); f = $2 }
        /^Model:/ { gsub(/ /, "", $2); m = $2 }
        END { if (f != "") printf " (family %s, model %s)", f, m }' || true)
    mem=$(awk '/^MemTotal:/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
    echo "Machine: ${cpu:-$(uname -m)}$model, $(nproc 2>/dev/null || echo '?') CPUs${mem:+, $mem}; $(uname -sr)"
    # The search kernel urnscan picked here (its speed differs by CPU; see
    # `urnscan bench` and --kernel).
    search=$("$bin" bench --floor --generate 1MiB --runs 1 -j 1 --format json 2> /dev/null |
        jq -r '"\(.kernel), software prefetch \(if .prefetch then "on" else "off" end)"' 2> /dev/null || true)
    [[ -n $search ]] && echo "Search kernel: $search"
    commit=$(git -C "$root" describe --always --dirty 2>/dev/null || true)
    echo "Finished: $(date -u '+%Y-%m-%d %H:%M UTC'); $(first_line "$bin" --version)${commit:+ (commit $commit)}"
    [[ $have_rg == 1 ]] && peers+=("$(first_line rg --version)")
    peers+=("$(first_line grep --version)" "$(first_line sort --version)")
    [[ $have_hyperfine == 1 ]] && peers+=("$(first_line hyperfine --version)")
    joined=$(printf '%s; ' "${peers[@]}")
    echo "Peers: ${joined%; }"
}

# ---------------------------------------------------------------------------
# Tools

if [[ $build == 1 && -z ${URNSCAN_BIN:-} ]]; then
    note "cargo build --release"
    (cd "$root" && cargo build --release --quiet)
fi
bin=${URNSCAN_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/urnscan}
[[ -x $bin ]] || die "no urnscan binary at $bin (build with cargo build --release)"
command -v jq > /dev/null || die "jq is needed to read JSON results (apt-get install jq)"
[[ -x /usr/bin/time ]] || die "GNU time is needed at /usr/bin/time for peak RSS (apt-get install time)"

have_hyperfine=0
if command -v hyperfine > /dev/null; then
    have_hyperfine=1
else
    note "hyperfine not found: timing with a /usr/bin/time loop instead (get it: apt-get install hyperfine, or cargo install hyperfine)"
fi
have_rg=0
if command -v rg > /dev/null; then have_rg=1; else note "ripgrep (rg) not found: its rows are skipped (get it: cargo install ripgrep, or apt-get install ripgrep)"; fi
have_grep_p=0
if echo urn:ab:c | grep -qP 'urn:' 2> /dev/null; then have_grep_p=1; else note "grep -P is not supported by this grep: its row is skipped"; fi
have_once=0
if "$bin" bench --help 2> /dev/null | grep -q -- --once; then have_once=1; else note "this urnscan has no 'bench --floor --once': the floor-process rows are skipped"; fi
have_count=0
if "$bin" scan --help 2> /dev/null | grep -q -- --count; then have_count=1; else note "this urnscan has no 'scan --count': its rows are skipped"; fi
have_dedup=0
if "$bin" dedup --help > /dev/null 2>&1; then have_dedup=1; else note "this urnscan has no 'dedup' subcommand: the (c) dedup rows are skipped"; fi

# The regex the peers use: a URN-ish shape, case-insensitive (-i).
re_pcre='urn:[a-z0-9][a-z0-9-]{0,30}[a-z0-9]:[^\s"<>]+'
re_ere='urn:[a-z0-9][a-z0-9-]{0,30}[a-z0-9]:[^[:space:]"<>]+' # \s is not special inside [] in POSIX

mkdir -p "$dir"
results=$dir/results.tsv
declare -A urns
: > "$results"
load_notes=()

# ---------------------------------------------------------------------------
# Workloads, generated once (regenerated when the parameters change)

generate() { # name, then urnscan gen arguments
    local name=$1
    shift
    local stamp="$dir/$name.params"
    if [[ -f $dir/$name && -f $stamp && $(cat "$stamp") == "$*" ]]; then
        note "reusing $dir/$name"
        return
    fi
    note "generating $dir/$name ($*)"
    "$bin" gen "$@" -o "$dir/$name" --truth "$dir/$name.truth.tsv"
    echo "$*" > "$stamp"
}

# (a) and (b): every reported URN equals the planted one at the same offset,
# and the --stats counts (and --count) equal the truth's planted and distinct-key counts.
check_text() { # workload, file name
    local w=$1
    shift
    local file=$dir/$1 truth=$dir/$1.truth.tsv
    local stats valid unique want_valid want_unique counted
    stats=$("$bin" scan --stats --format json "$file")
    valid=$(jq .valid <<< "$stats")
    unique=$(jq .unique <<< "$stats")
    want_valid=$(wc -l < "$truth")
    want_unique=$(cut -f3 "$truth" | LC_ALL=C sort -u | wc -l)
    [[ $valid == "$want_valid" && $unique == "$want_unique" ]] ||
        die "$1: urnscan found $valid URNs / $unique unique, the truth has $want_valid / $want_unique"
    if [[ $have_count == 1 ]]; then
        counted=$("$bin" scan --count "$file")
        [[ $counted == "$want_valid" ]] || die "$1: urnscan scan --count says $counted, the truth has $want_valid URNs"
    fi
    if [[ $full_check == 1 ]]; then
        cmp -s <("$bin" scan "$file") <(awk -F'\t' '{ print $1 ":" $2 }' "$truth") ||
            die "$1: urnscan's offsets and URNs differ from the truth (compare: $bin scan $file vs cut -f1,2 $truth)"
    fi
    note "$1: checked: $valid URNs, $unique unique keys, as planted"
    urns[$w]=$valid
}

# (c): the unique and valid counts equal the truth (key<TAB>count per key);
# urnscan dedup's output has one line per distinct key.
check_dataset() { # workload, file name
    local w=$1
    shift
    local file=$dir/$1 truth=$dir/$1.truth.tsv
    local stats valid unique want_valid want_unique
    stats=$("$bin" scan --stats --format json "$file")
    valid=$(jq .valid <<< "$stats")
    unique=$(jq .unique <<< "$stats")
    want_unique=$(wc -l < "$truth")
    want_valid=$(awk -F'\t' '{ n += $2 } END { print n }' "$truth")
    [[ $valid == "$want_valid" && $unique == "$want_unique" ]] ||
        die "$1: urnscan scan found $valid URNs / $unique unique, the truth has $want_valid / $want_unique"
    note "$1: checked: $valid valid lines, $unique distinct keys, as planted"
    if [[ $have_dedup == 1 ]]; then
        local got
        got=$("$bin" dedup -q "$file" | wc -l)
        if [[ $got == "$want_unique" ]]; then
            note "$1: checked: urnscan dedup prints $got lines = distinct keys"
        else
            note "WARNING: $1: urnscan dedup printed $got lines, the truth has $want_unique distinct keys"
        fi
    fi
    urns[$w]=$valid
}

# ---------------------------------------------------------------------------
# Timing

declare -a row_workload row_name row_cmd row_class

add_row() { # workload, name, class (j1 | jN | peer), command
    row_workload+=("$1")
    row_name+=("$2")
    row_class+=("$3")
    row_cmd+=("$4")
}

floor_of() { # file, threads -> seconds of "floor + map"
    cat "$1" > /dev/null
    "$bin" bench --floor --format json --runs 5 -j "$threads" "$1" |
        jq --argjson t "$2" '.rows[] | select(.phase == "floor + map" and .threads == $t) | .seconds'
}

# How much of the page cache sits in huge (PMD-sized) folios, system-wide,
# or nothing where /proc/meminfo does not say. Mapping a cached file costs
# several times more when its pages are 4 KiB folios (seen on ext4 under
# Linux 6.18: the 1 GiB floor at 43 ms just after the file was read back
# from disk, 160 ms with it cached in small folios), and every
# urnscan row maps the file, so the floor and the ratios move with it.
huge_file_pages() {
    [[ -r /proc/meminfo ]] || return 0
    awk '/^Cached:/ {c = $2} /^FileHugePages:/ {h = $2}
         END {if (h != "") printf "; page cache %d MiB, %d MiB of it in huge folios", c / 1024, h / 1024}' \
        /proc/meminfo || true
}

# How much of the file urnscan maps in huge pages (`urnscan bench` reports
# it), or nothing where this urnscan does not say: the page cache's share
# above is system-wide, this is the file itself.
mapped_huge() { # file
    "$bin" bench --floor --format json --runs 1 -j 1 "$1" 2> /dev/null |
        jq -r 'if .resident_bytes then "; urnscan maps \(.resident_in_huge_pages / 1048576 | floor) of \(.resident_bytes / 1048576 | floor) MiB of it in huge pages" else empty end' ||
        true
}

# Median seconds of each row of one workload, appended to $results as
# workload, name, class, median, peak RSS KiB, output lines.
time_workload() {
    local w=$1 file=$2 i
    local idx=()
    for i in "${!row_workload[@]}"; do [[ ${row_workload[$i]} == "$w" ]] && idx+=("$i"); done
    local prepare="cat $(printf %q "$file") > /dev/null" # page-cache it before every run
    bash -c "$prepare"
    load_notes+=("$w: $(uptime | sed 's/.*load average/load average/')$(huge_file_pages)$(mapped_huge "$file")")
    note "timing $w ($(uptime | sed 's/.*load average/load average/'))"
    local medians=()
    if [[ $have_hyperfine == 1 ]]; then
        local args=()
        for i in "${idx[@]}"; do args+=(-n "${row_name[$i]}" "${row_cmd[$i]}"); done
        hyperfine --style basic --warmup 1 --runs "$runs" --prepare "$prepare" \
            --export-json "$dir/$w.hyperfine.json" "${args[@]}" >&2
        mapfile -t medians < <(jq '.results[].median' "$dir/$w.hyperfine.json")
    else
        for i in "${idx[@]}"; do
            local times=() r
            bash -c "${row_cmd[$i]}" > /dev/null 2>&1 || true # warm-up
            for ((r = 0; r < runs; r++)); do
                bash -c "$prepare"
                /usr/bin/time -f %e -o "$dir/time.out" bash -c "${row_cmd[$i]}" > /dev/null 2>&1 || true
                times+=("$(tail -1 "$dir/time.out")")
            done
            medians+=("$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')")
        done
    fi
    local k=0
    for i in "${idx[@]}"; do
        bash -c "$prepare"
        /usr/bin/time -v -o "$dir/rss.out" bash -c "${row_cmd[$i]}" > "$dir/out.txt" 2> /dev/null || true
        local rss out_lines
        rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/rss.out")
        out_lines=$(wc -l < "$dir/out.txt")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "${row_name[$i]}" "${row_class[$i]}" "${medians[$k]}" "$rss" "$out_lines" >> "$results"
        k=$((k + 1))
    done
    rm -f "$dir/out.txt"
}

floor_rows() { # workload, file
    local f1 fn
    f1=$(floor_of "$2" 1)
    fn=$(floor_of "$2" "$threads")
    printf '%s\t%s\t%s\t%s\t\t\n' "$1" "floor: read every byte -j1 *" j1 "$f1" >> "$results"
    printf '%s\t%s\t%s\t%s\t\t\n' "$1" "floor: read every byte -j$threads *" jN "$fn" >> "$results"
}

# The floor as a whole process (`bench --floor --once`: map, read every byte,
# unmap, exit), timed like the other rows, so a whole `urnscan scan` compares
# with a whole floor process: median against median, start-up and page
# faults on both sides.
floor_process_rows() { # workload, file
    [[ $have_once == 1 ]] || return 0
    add_row "$1" "floor process -j1" fp1 "$bin bench --floor --once -j1 $2"
    add_row "$1" "floor process -j$threads" fpN "$bin bench --floor --once -j$threads $2"
}

urnscan_rows() { # workload, file, command words
    local w=$1 file=$2
    shift 2
    add_row "$w" "urnscan $* -j1" j1 "$bin $* -j1 $file"
    add_row "$w" "urnscan $* -j$threads" jN "$bin $* -j$threads $file"
}

# ---------------------------------------------------------------------------
# Run

text=text-$size-200.txt
dense=dense-$dense_size-5000.txt
data=dataset-$lines-$distinct.txt
wants a && generate "$text" --size "$size" --seed 7 --density 200
wants b && generate "$dense" --size "$dense_size" --seed 7 --density 5000
wants c && generate "$data" --dataset --lines "$lines" --distinct "$distinct" --seed 7
wants a && check_text a "$text"
wants b && check_text b "$dense"
wants c && check_dataset c "$data"

if wants a; then
    f=$dir/$text
    floor_process_rows a "$f"
    urnscan_rows a "$f" scan --unique --stats
    # Counting, the like-for-like of `rg -c` (which counts matching lines).
    [[ $have_count == 1 ]] && urnscan_rows a "$f" scan --count
    if [[ $have_rg == 1 ]]; then
        add_row a "rg -o -i -a RE | sort -u" peer "rg -o -i -a '$re_pcre' $f | LC_ALL=C sort -u"
        add_row a "rg -c -i urn:" peer "rg -c -i urn: $f"
    fi
    [[ $have_grep_p == 1 ]] && add_row a "grep -oiP RE | sort -u" peer "LC_ALL=C grep -oiP '$re_pcre' $f | LC_ALL=C sort -u"
    add_row a "grep -oiE RE | sort -u" peer "LC_ALL=C grep -oiE '$re_ere' $f | LC_ALL=C sort -u"
    floor_rows a "$f"
    time_workload a "$f"
fi
if wants b; then
    f=$dir/$dense
    floor_process_rows b "$f"
    urnscan_rows b "$f" scan --unique --stats
    [[ $have_rg == 1 ]] && add_row b "rg -o -i -a RE | sort -u" peer "rg -o -i -a '$re_pcre' $f | LC_ALL=C sort -u"
    floor_rows b "$f"
    time_workload b "$f"
fi
if wants c; then
    f=$dir/$data
    floor_process_rows c "$f"
    [[ $have_dedup == 1 ]] && urnscan_rows c "$f" dedup -q
    urnscan_rows c "$f" scan --unique
    add_row c "sort -u" peer "LC_ALL=C sort -u $f"
    floor_rows c "$f"
    time_workload c "$f"
fi

# ---------------------------------------------------------------------------
# The table

declare -A bytes
for w in a b c; do
    case $w in a) f=$dir/$text ;; b) f=$dir/$dense ;; c) f=$dir/$data ;; esac
    [[ -f $f ]] && bytes[$w]=$(stat -c %s "$f")
done
{
    echo "| workload | command | median ms | GB/s | M URNs/s | x floor | x floor in-process | x urnscan | peak RSS MiB | output lines |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for w in a b c; do
        grep -q "^$w	" "$results" || continue
        awk -F'\t' -v w="$w" -v bytes="${bytes[$w]}" -v urns="${urns[$w]:-0}" '
            $1 == w { name[NR] = $2; class[NR] = $3; t[NR] = $4; rss[NR] = $5; out[NR] = $6; order[++n] = NR
                      if ($2 ~ /^floor/) floor[$3] = $4
                      else if ($2 ~ /^urnscan/ && $2 !~ /--count/ && (best == "" || $4 < best)) best = $4 }
            END {
                label["a"] = "(a) text 200/MiB"; label["b"] = "(b) dense 5000/MiB"; label["c"] = "(c) dataset"
                for (k = 1; k <= n; k++) {
                    i = order[k]; many = (class[i] == "jN" || class[i] == "fpN")
                    # x floor: against the floor process at the row'"'"'s thread
                    # count when there is one, else the in-process floor.
                    inproc = many ? floor["jN"] : floor["j1"]
                    proc = many ? floor["fpN"] : floor["fp1"]
                    if (proc == "" || name[i] ~ /^floor:/) proc = inproc
                    # A pipe inside a command (`rg ... | sort -u`) is escaped,
                    # or Markdown reads it as a column of its own.
                    cell = name[i]; gsub(/\|/, "\\|", cell)
                    printf "| %s | %s | %.1f | %.2f | %s | %.2f | %s | %s | %s | %s |\n", label[w], cell, t[i] * 1e3,
                        bytes / t[i] / 1e9, (name[i] ~ /^floor/) ? "" : sprintf("%.2f", urns / t[i] / 1e6), t[i] / proc,
                        (name[i] ~ /^floor/) ? "" : sprintf("%.2f", t[i] / inproc),
                        (best == "" || name[i] ~ /^floor/) ? "" : sprintf("%.2f", t[i] / best),
                        rss[i] == "" ? "" : sprintf("%.0f", rss[i] / 1024), out[i]
                }
            }' "$results"
    done
} > "$dir/results.md"
{
    echo
    cat "$dir/results.md"
    echo
    echo "* in-process, best of 5 (urnscan bench --floor: fresh mmap, read every byte, unmap)."
    echo "floor process: urnscan bench --floor --once (map, read every byte, unmap, exit), timed like every row."
    echo "Runs: hyperfine=$have_hyperfine, $runs runs after 1 warm-up, the file read into the page cache before"
    echo "each; x floor against the floor process at the row's thread count (peers: 1 thread), x floor"
    echo "in-process against the * rows; M URNs/s counts valid URNs (dataset: valid lines)."
    printf 'Load while timing: %s\n' "${load_notes[@]}"
    # The peers' heaps follow the system's huge-page setting (urnscan turns
    # them off for its own): `sort -u` spends several times the system time
    # zeroing huge pages under `always`, so the ratios depend on it.
    thp=/sys/kernel/mm/transparent_hugepage/enabled
    [[ -r $thp ]] && echo "Transparent huge pages: $(cat "$thp")"
    # What a table needs beside it to be read later (BENCHMARKS.md gives
    # every table with its machine, date and versions).
    describe_run
}
