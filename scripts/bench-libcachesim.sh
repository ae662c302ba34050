#!/usr/bin/env bash
# Sets sparseflash's eviction policies beside libCacheSim's on the same neuron
# request streams: miss counts (they must be equal) and requests per second
# with each stream in memory and only the request loop timed, the two programs
# alternated policy by policy on one machine (which goes first swaps from round
# to round), so that a host whose speed drifts weighs on both alike:
#
#   scripts/bench-libcachesim.sh LIBCACHESIM_DIR [options]
#     --out DIR          streams, outputs and the harness binary (default bench-libcachesim)
#     --rounds N         alternations per stream (default 2)
#     --repeat N         runs of each policy and size per round, median time (default 3)
#     --policies LIST    default lru,fifo,lfu,sieve,s3fifo,belady
#     --sizes LIST       shares of the working set in % (default 10,25,50)
#     --tokens N         tokens of the generated trace stream (default 256)
#
# LIBCACHESIM_DIR is a libCacheSim source tree built with CMake into _build
# (github.com/1a1a11a/libCacheSim; needs libglib2.0-dev). Nothing of it enters
# sparseflash: scripts/libcachesim-loop.c is compiled against it here, outside
# the build. Streams: the synthetic one of `trace synth-stream` (32 x 14,336
# neurons, 10 % per layer per token, 70 % reused from the previous 4 tokens,
# Zipf 1.0, 8 KiB objects, 512 tokens) and the active neurons of a generated
# turbosparse-mistral-7b trace.
set -euo pipefail
usage() { sed -n 2,22p "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ $# -ge 1 ] || usage
lcs=$1
shift
out=bench-libcachesim rounds=2 repeat=3 policies=lru,fifo,lfu,sieve,s3fifo,belady sizes=10,25,50 tokens=256
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
lib="$lcs/_build/liblibCacheSim.a"
[ -f "$lib" ] || { echo "$lib: not found (build libCacheSim with CMake into $lcs/_build)" >&2; exit 2; }
cli="$(cd "$(dirname "$0")/.." && pwd)/build/bin/sparseflash"
[ -x "$cli" ] || { echo "$cli: build sparseflash first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
harness="$out/libcachesim-loop"
gcc -O2 -o "$harness" "$(dirname "$0")/libcachesim-loop.c" -I"$lcs/libCacheSim/include" "$lib" \
  $(pkg-config --cflags --libs glib-2.0) -lzstd -lm -lpthread

[ -f "$out/synthetic.oracleGeneral" ] || "$cli" trace synth-stream --out "$out/synthetic.oracleGeneral"
if [ ! -f "$out/mistral.oracleGeneral" ]; then
  "$cli" trace gen --model turbosparse-mistral-7b --tokens "$tokens" --out "$out/mistral.trace" --force
  "$cli" trace export "$out/mistral.trace" --format oracle-general --out "$out/mistral.oracleGeneral"
fi

pct_sizes=$(echo "$sizes" | sed 's/\([0-9.]*\)/\1%/g')
# One policy $p at every size on stream file $f, round $r: the rows without
# their header, appended in the same order on both sides.
ours() {
  "$cli" trace cachesim "$f" --policy "$p" --size "$pct_sizes" --repeat "$repeat" |
    tail -n +2 >> "$out/$stream.ours.$r"
}
theirs() { "$harness" "$f" "$p" "$sizes" "$repeat" | tail -n +2 >> "$out/$stream.libcachesim.$r"; }
for stream in synthetic mistral; do
  f="$out/$stream.oracleGeneral"
  for r in $(seq 1 "$rounds"); do
    echo "== $stream, round $r/$rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    : > "$out/$stream.ours.$r"
    : > "$out/$stream.libcachesim.$r"
    for p in ${policies//,/ }; do
      if ((r % 2)); then ours; theirs; else theirs; ours; fi
    done
  done
  echo "## $stream: misses and Mreq/s per round (sparseflash / libCacheSim), ratio of medians, ratio per round"
  printf '%-8s %5s %12s %12s %5s  %-24s %-24s %6s  %s\n' policy size misses libCacheSim same \
    "sparseflash Mreq/s" "libCacheSim Mreq/s" ratio "per round"
  for r in $(seq 1 "$rounds"); do
    paste <(awk '{print $1, $2, $5, $7}' "$out/$stream.ours.$r") \
          <(awk '{print $5, $7}' "$out/$stream.libcachesim.$r")
  done | awk '{k = $1 " " $2; if (!(k in m)) {order[n++] = k; m[k] = $3; l[k] = $5}
               if ($3 != m[k] || $5 != l[k]) bad[k] = 1
               o[k] = o[k] (o[k] ? "," : "") $4; t[k] = t[k] (t[k] ? "," : "") $6
               q[k] = q[k] (q[k] ? "," : "") sprintf("%.1f", $6 > 0 ? $4 / $6 : 0)}
    function median(list,   a, c, i, j, x) {
      c = split(list, a, ",")
      for (i = 2; i <= c; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
    }
    END {for (i = 0; i < n; i++) {k = order[i]; split(k, p, " ")
      printf "%-8s %5s %12s %12s %5s  %-24s %-24s %6.1f  %s\n", p[1], p[2], m[k], l[k],
        (m[k] == l[k] && !(k in bad)) ? "yes" : "NO", o[k], t[k], median(o[k]) / median(t[k]), q[k]}}'
done
