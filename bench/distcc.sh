#!/bin/sh
# bench/distcc.sh [FILES] [ROUNDS]: the generated tree (bench/vsched-gen,
# default 200 files) built cold with a local `-j2` and through distcc to a
# distccd on 127.0.0.1 with `-j8`, alternating, ROUNDS (default 5) times
# each; prints every round, the medians and their ratio, distcc's `remote`
# peak and how many compiles distccd's log says it ran. The loopback
# daemon shares this machine's cores: this measures the plumbing, not a
# speed-up. Run from a configured build tree.
set -u
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=${top_builddir:-$top_srcdir}
files=${1:-200}
rounds=${2:-5}
. "$top_srcdir/tests/lib.sh"
scratch
. "$top_srcdir/tests/distcc_lib.sh"
distccd_start
"$top_builddir/bench/vsched-gen" --seed 16 --files "$files" --headers 30 \
    --dirs 4 --funcs 6 "$SCRATCH/tree" >/dev/null
cd "$SCRATCH"
write_ini local ""
write_ini dist distcc
now() { date +%s.%N; }
one() { # one NAME JOBS: a cold build, prints its wall seconds
    rm -rf "out/$1" "state-$1"
    _t0=$(now)
    DISTCC_FALLBACK=0 "$top_builddir/vsched-run" --config "$1.ini" -j "$2" \
        --stats >"$1.out" 2>&1 || { echo "build $1 failed" >&2; cat "$1.out" >&2; exit 1; }
    echo "$(now) $_t0" | awk '{ printf "%.3f\n", $1 - $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >local.t
: >dist.t
for r in $(seq 1 "$rounds"); do
    l=$(one local 2)
    d=$(one dist 8)
    echo "$l" >>local.t
    echo "$d" >>dist.t
    echo "round $r: local -j2 ${l}s  distcc -j8 ${d}s"
done
ml=$(median <local.t)
md=$(median <dist.t)
echo "files=$files rounds=$rounds median local -j2 ${ml}s, distcc loopback -j8 ${md}s, ratio $(echo "$md $ml" | awk '{ printf "%.2f", $1 / $2 }')"
grep '^stats: resource remote' dist.out
echo "distccd COMPILE_OK lines: $(grep -c COMPILE_OK distccd.log) ($rounds x $files compiles sent)"
grep COMPILE_OK distccd.log | tail -1
same_objects local dist && echo "last round's objects equal the local build's"
