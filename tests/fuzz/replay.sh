#!/bin/sh
# Replay each fuzz target's seed corpus (tests/fuzz/corpus/TARGET) through
# its gcc-built driver: any crash a long libFuzzer run found, once added
# there, stays a regression test without clang.
. "${top_srcdir:-.}/tests/lib.sh"
for t in ini scan depfile json; do
    out=$("$top_builddir/tests/fuzz/replay_$t" "$top_srcdir/tests/fuzz/corpus/$t" 2>&1)
    rc=$?
    echo "$out"
    check "fuzz target $t: its corpus replays without a finding" test $rc -eq 0
    n=$(ls "$top_srcdir/tests/fuzz/corpus/$t" | wc -l)
    case "$out" in
    *": $n inputs replayed"*) pass "fuzz target $t: every input ran ($n)" ;;
    *) fail "fuzz target $t: every input ran ($n)" ;;
    esac
done
finish
