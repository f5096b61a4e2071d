#!/usr/bin/env bash
# benches/ab.sh — interleaved timing of a few commands, for close calls on a
# noisy machine (a shared VM, a laptop on battery).
#
# hyperfine runs all the runs of one command, then all the runs of the next:
# when the machine's speed drifts over a minute (other guests, frequency,
# the page cache), the drift lands on one command and looks like a
# difference between them. Here every round runs each command once, the
# order rotating from round to round, so a slow minute is shared by all
# of them; the medians over rounds are then compared.
#
#   benches/ab.sh [--rounds N] [--warmup N] [--prepare CMD] LABEL=COMMAND ...
#
# Each COMMAND runs through `bash -c` with stdout and stderr discarded; an
# exit code above 1 (urnscan's and grep's "error"; 1 is "nothing found") is
# reported and stops the run. Printed per label: min, median and max wall
# time in whole ms over the rounds (starting `bash -c` included, a few ms:
# time commands that take 100 ms or more), and the median's ratio to the
# first label's, a ratio of times: 0.80 is faster than the first label
# (hyperfine's "x faster" is the inverse, 1.25).
# --prepare CMD runs, untimed, before every run (as hyperfine's does): for
# example `cat FILE > /dev/null` where the page cache drains between runs.
#
# Example: two builds of urnscan on the 1 GiB text of compare.sh,
#   benches/ab.sh --rounds 11 \
#     "old=/tmp/urnscan-old scan --unique --stats -j1 /tmp/urnscan-bench/text-1GiB-200.txt" \
#     "new=target/release/urnscan scan --unique --stats -j1 /tmp/urnscan-bench/text-1GiB-200.txt"
set -euo pipefail

rounds=9
warmup=1
prepare=
while [[ $# -gt 0 ]]; do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --prepare) prepare=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [[ $# -eq 0 ]]; then
    echo "ab.sh: give at least one LABEL=COMMAND (see --help)" >&2
    exit 2
fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]]; then
    echo "ab.sh: --rounds must be a positive number and --warmup a number" >&2
    exit 2
fi

labels=()
commands=()
for spec in "$@"; do
    if [[ $spec != *=* || -z ${spec%%=*} ]]; then
        echo "ab.sh: '$spec' is not LABEL=COMMAND" >&2
        exit 2
    fi
    labels+=("${spec%%=*}")
    commands+=("${spec#*=}")
done
n=${#labels[@]}
declare -a times

run_once() { # index -> wall ms on stdout
    local start end status
    if [[ -n $prepare ]] && ! bash -c "$prepare" > /dev/null 2>&1; then
        echo "ab.sh: --prepare failed: $prepare" >&2
        exit 2
    fi
    start=$(date +%s%N)
    status=0
    bash -c "${commands[$1]}" > /dev/null 2>&1 || status=$?
    end=$(date +%s%N)
    if ((status > 1)); then
        echo "ab.sh: '${labels[$1]}' exited with $status: ${commands[$1]}" >&2
        exit 2
    fi
    echo $(((end - start) / 1000000))
}

for ((r = 0; r < warmup + rounds; r++)); do
    for ((k = 0; k < n; k++)); do
        i=$(((r + k) % n))
        ms=$(run_once "$i")
        if ((r >= warmup)); then
            times[i]+="$ms "
        fi
    done
done

# "min median max" of a list of times.
stats_of() { tr ' ' '\n' <<< "$1" | grep . | sort -n | awk '{a[NR] = $1} END {print a[1], a[int((NR + 1) / 2)], a[NR]}'; }
read -r _ first_median _ <<< "$(stats_of "${times[0]}")"
printf '%-12s %8s %8s %8s %9s   (%d rounds, order rotated each round)\n' label min median max "x ${labels[0]}" "$rounds"
for ((i = 0; i < n; i++)); do
    read -r min median max <<< "$(stats_of "${times[i]}")"
    ratio=$(awk -v m="$median" -v f="$first_median" 'BEGIN {printf (f > 0 ? "%.3f" : "-"), m / f}')
    printf '%-12s %8s %8s %8s %9s\n' "${labels[i]}" "$min" "$median" "$max" "$ratio"
done
