#!/bin/sh
# Durations known: a cold build (outputs and artifact cache gone, the
# state with the last build's durations kept) starts the files that took
# longest first -- longest processing time first -- and no short compile
# starts before every long file's compile has started. Checked on the
# order of the Artifact tasks in --trace against the durations the first
# build recorded (its --report), never on times.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
# 4 long files last in name order, so name order would start them last;
# every file includes headers three levels deep, which the build
# discovers level by level.
mktree "$S" --seed 5 --files 24 --headers 8 --funcs 3 --long 4 \
    --long-from 20 --long-funcs 60 ||
    { echo "cannot generate the tree"; exit 1; }
sed -i 's/^inputs = .*/inputs = src\/*.c/; /^link = /d' "$S/b.ini"

# longest REPORT K: the K inputs with the largest recorded duration_ms.
longest() {
    jq -r '.files | sort_by(-.duration_ms) | .[:'"$2"'] | .[].path' "$1" | sort
}
# first_artifacts TRACE K: the inputs of the first K Artifact tasks to
# start, sorted.
first_artifacts() {
    jq -r '[.traceEvents[] | select(.ph == "X" and .cat == "artifact")]
        | sort_by(.ts) | .[:'"$2"'][] | .name' "$1" | sort
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

for jobs in 1 2; do
    for round in 1 2; do
        rm -rf "$S/out" "$S/state/cache"
        build "$S" "cold$jobs.$round" -j "$jobs" \
            --trace "$S/cold$jobs.$round.trace"
        check "-j $jobs, round $round: the cold build exits 0" test $? -eq 0
        check "... compiling every file" \
            test "$(artifact_count "$S/cold$jobs.$round.trace")" -eq 24
        same_list "... the first 4 compiles to start are the 4 longest recorded" \
            "$(longest "$S/first.json" 4)" \
            "$(first_artifacts "$S/cold$jobs.$round.trace" 4)"
    done
done
finish
