#!/bin/sh
# Durations known: a cold build (outputs and artifact cache gone, the
# state with the last build's durations kept) starts the compiles that
# took longest first -- longest processing time first -- even when the
# long files are last in name order and their headers, three levels
# deep, are found by the build's own include scan. Checked on the order
# of the Artifact tasks in --trace against the durations the build before
# recorded (its --report), never on times. Then a failure with durations
# known is reported as it always is.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
# 4 long files last in name order, so name order would start them last.
mktree "$S" --seed 5 --files 24 --headers 8 --funcs 3 --long 4 \
    --long-from 20 --long-funcs 60 ||
    { echo "cannot generate the tree"; exit 1; }
sed -i 's/^inputs = .*/inputs = src\/*.c/; /^link = /d' "$S/b.ini"

# first_by_duration REPORT TRACE K: "ok" when the first K Artifact tasks
# of TRACE to start are the longest by REPORT's duration_ms (the
# durations the build had) up to the ready queue's resolution: weights
# are compared in classes a quarter of an octave wide, so a compile may
# precede one up to 1.25x longer (1 ms of rounding allowed); else what
# ran first and the longest that did not.
first_by_duration() {
    jq -rn --slurpfile r "$1" --slurpfile t "$2" --argjson k "$3" '
        ($r[0].files | map({key: .path, value: .duration_ms})
            | from_entries) as $d
        | ([$t[0].traceEvents[] | select(.ph == "X" and .cat == "artifact")]
            | sort_by(.ts) | map(.name)) as $o
        | ($o[:$k] | map($d[.]) | min) as $lo
        | ($o[$k:] | map($d[.]) | max) as $hi
        | if ($lo + 1) * 1.25 >= $hi then "ok"
          else "first \($k): \($o[:$k] | map("\(.) \($d[.]) ms")
              | join(", ")); later: \($o[$k:] | map(select($d[.] == $hi))
              | .[0]) \($hi) ms" end'
}
# artifact_count TRACE: Artifact tasks in it.
artifact_count() {
    jq '[.traceEvents[] | select(.ph == "X" and .cat == "artifact")]
        | length' "$1"
}

build "$S" first
check "the first build (recording durations) exits 0" test $? -eq 0
# Recorded durations are times, so only their order is used below; the
# long files must stand out for the check to mean anything.
check "each long file took longer than the median short one" \
    test "$(jq '[.files[] | select(.path < "src/f0020.c") | .duration_ms]
        | sort | .[length / 2 | floor]' "$S/first.json")" -lt \
    "$(jq '[.files[] | select(.path >= "src/f0020.c") | .duration_ms]
        | min' "$S/first.json")"

prev=first
for jobs in 1 2; do
    for round in 1 2; do
        cur=cold$jobs.$round
        rm -rf "$S/out" "$S/state/cache"
        build "$S" "$cur" -j "$jobs" --trace "$S/$cur.trace"
        check "-j $jobs, round $round: the cold build exits 0" test $? -eq 0
        check "... compiling every file" \
            test "$(artifact_count "$S/$cur.trace")" -eq 24
        # The state holds the durations of the build before (each build
        # records its own).
        same_list "... the first 4 compiles to start are the longest recorded" \
            ok "$(first_by_duration "$S/$prev.json" "$S/$cur.trace" 4)"
        prev=$cur
    done
done

# The scan running first changes no outcome: a file including a header
# that does not exist fails alone, with the compiler's message, and the
# others build (-k 0).
sed -i '1i #include "l1/nope.h"' "$S/tree/src/f0005.c"
rm -rf "$S/out" "$S/state/cache"
build "$S" missing -k 0
check "a missing header with durations known: exit 1" test $? -eq 1
check "... naming the header" grep -q "l1/nope.h: No such file" "$S/missing.out"
same_list "... only that file failed" "src/f0005.c failed" \
    "$(jq -r '.files[] | select(.status != "ok") | "\(.path) \(.status)"' \
        "$S/missing.json")"
check "... the 23 others built" \
    test "$(jq '[.files[] | select(.status == "ok")] | length' "$S/missing.json")" -eq 23
# SIGINT while the scan runs (durations known, so it runs first, alone):
# the compiles after it are cancelled too, and the run winds down by
# itself -- not by the signal thread's exit when its 10 s grace period
# runs out, which is what happened when the cancel missed the compiles.
# 3000 small files make the scan last a while (a signal may also land in
# the plan, which exits at once); their durations come from a first
# build with a stand-in compiler.
T=$S/big
mkdir -p "$T"
"$GEN" --seed 9 --files 3000 --funcs 2 "$T/tree" >/dev/null &&
    find "$T/tree" -type f -exec touch -d '-1 minute' {} + ||
    { echo "cannot generate the big tree"; exit 1; }
cat >"$T/fakecc" <<'EOF2'
#!/bin/sh
o= d=
while [ $# -gt 0 ]; do
    case $1 in -o) o=$2; shift ;; -MF) d=$2; shift ;; esac
    shift
done
[ -n "$o" ] && echo obj >"$o"
[ -n "$d" ] && echo "x:" >"$d"
exit 0
EOF2
chmod +x "$T/fakecc"
sed "s|^cflags = .*|compiler = $T/fakecc\ncflags = -O0|; s|^inputs = .*|inputs = src/*.c|; s|= tree\$|= $T/tree|; s|^state_dir = .*|state_dir = $T/state|; s|^out_dir = .*|out_dir = $T/out|" \
    "$S/b.ini" >"$T/b.ini"
vsched_run --config "$T/b.ini" -q >"$T/fake.out" 2>&1
check "the big tree builds with the stand-in compiler" test $? -eq 0
cp -R "$T/state" "$T/state.keep"
for delay in 0.1 0.2 0.4; do
    rm -rf "$T/state" "$T/out"
    cp -R "$T/state.keep" "$T/state"
    "$top_builddir/vsched-run" --config "$T/b.ini" --set executor.compiler=cc \
        -q >"$T/int.out" 2>&1 &
    pid=$!
    sleep "$delay"
    kill -INT "$pid"
    t0=$(date +%s)
    wait "$pid"
    rc=$?
    t1=$(date +%s)
    check "SIGINT after $delay s: exit 130" test "$rc" -eq 130
    check "... ended by itself, well inside the 10 s grace period" \
        test $((t1 - t0)) -le 7
    check "... most files not built" \
        test "$(find "$T/out" -name '*.o' 2>/dev/null | wc -l)" -lt 1000
done
finish
