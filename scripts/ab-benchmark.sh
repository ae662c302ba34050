#!/usr/bin/env bash
# Two builds of one Google Benchmark binary, alternated round by round on one
# machine, so that a host whose speed drifts within minutes weighs on both
# alike:
#
#   scripts/ab-benchmark.sh BEFORE AFTER FILTER [options]
#     --rounds N        alternations (default 8; the first build runs first in odd rounds)
#     --repeat N        repetitions per run, the fastest kept (default 3)
#
# BEFORE and AFTER are paths to the two binaries (e.g. a copy of
# build/benchmarks/simulator_benchmark made before a change, and the one
# after); FILTER is a --benchmark_filter regex. For each benchmark the
# filter selects it prints every round's fastest real time of each build, the
# medians, and in how many rounds AFTER was faster. Nothing is written.
set -euo pipefail
usage() { sed -n 2,14p "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ $# -ge 3 ] || usage
before=$1 after=$2 filter=$3
shift 3
rounds=8 repeat=3
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
for bin in "$before" "$after"; do
  [ -x "$bin" ] || { echo "$bin: not an executable benchmark binary" >&2; exit 2; }
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# "name time unit" per repetition of every benchmark the filter selects.
run() {
  "$1" --benchmark_filter="$filter" --benchmark_repetitions="$repeat" \
    --benchmark_format=csv 2>/dev/null |
    awk -F, '/^"/ && $1 !~ /_(mean|median|stddev|cv)"$/ { gsub(/"/, "", $1); print $1, $3, $5 }'
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="before after"; else order="after before"; fi
  for side in $order; do
    bin=$before
    [ "$side" = after ] && bin=$after
    run "$bin" | awk -v side="$side" -v r="$r" '{ print side, r, $1, $2, $3 }' >> "$results"
  done
  echo "round $r of $rounds done" >&2
done
[ -s "$results" ] || { echo "no benchmark matched '$filter'" >&2; exit 2; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# The fastest repetition per (side, round, benchmark), then per benchmark the
# rounds, the medians and the rounds AFTER won.
sort -k3,3 -k2,2n -k1,1 "$results" | awk '
  { key = $1 " " $2 " " $3
    if (!(key in best) || $4 < best[key]) best[key] = $4
    names[$3] = 1; unit[$3] = $5; if ($2 > last) last = $2 }
  function median(list, n,   i, j, t, a) {
    for (i = 1; i <= n; i++) a[i] = list[i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    for (name in names) {
      n = 0; wins = 0; line_b = ""; line_a = ""
      for (r = 1; r <= last; r++) {
        b = best["before " r " " name]; a = best["after " r " " name]
        if (b == "" || a == "") continue
        n++; bs[n] = b; as[n] = a; if (a < b) wins++
        line_b = line_b sprintf(" %.4g", b); line_a = line_a sprintf(" %.4g", a)
      }
      printf "%s (fastest of each run, %s)\n  before:%s\n  after: %s\n", name, unit[name], line_b, line_a
      mb = median(bs, n); ma = median(as, n)
      printf "  medians %.4g -> %.4g (%+.1f %%); after faster in %d of %d rounds\n",
             mb, ma, 100 * (ma - mb) / mb, wins, n
    }
  }'
