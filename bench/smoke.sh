#!/bin/sh
# The benchmark suite at tiny sizes (bench/run --smoke): every workload
# runs and every result is checked -- the drivers' results, the oneTBB
# peer's node count, object counts, ninja's rebuilt set -- never a time.
# Without ninja or the oneTBB peer their comparisons are skipped, and the
# table says so.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
scratch

sh "$top_srcdir/bench/run" --smoke --work "$SCRATCH/w" \
    --out "$SCRATCH/table.md" >"$SCRATCH/out" 2>&1
rc=$?
cat "$SCRATCH/out"
check "every check of the smoke run passes" test "$rc" -eq 0
for w in 1 2 3 4 5 6 7 8; do
    check "the table has workload $w" grep -q "^| $w |" "$SCRATCH/table.md"
done
check "the table names the machine" grep -q "^- machine: " "$SCRATCH/table.md"
if [ -x "$top_builddir/bench/peers/vsched-tbb-flow" ]; then
    check "the oneTBB peer ran as many nodes as vsched" \
        grep -q "nodes run: 6000 each side" "$SCRATCH/table.md"
else
    check "without the oneTBB peer the table says so" \
        grep -q "not built (no oneTBB)" "$SCRATCH/table.md"
fi
if command -v ninja >/dev/null 2>&1; then
    check "ninja rebuilt the edited header's dependents" \
        grep -q "^| 5 | .*ninja [0-9.]* s; [1-9][0-9]* compiled" "$SCRATCH/table.md"
else
    check "without ninja the table says so" \
        grep -q "ninja not installed" "$SCRATCH/table.md"
fi

# The same harness without either peer: skipped, said, still checked.
sh "$top_srcdir/bench/run" --smoke --no-ninja --no-tbb --work "$SCRATCH/w2" \
    --out "$SCRATCH/bare.md" sched cold edit >"$SCRATCH/bare.out" 2>&1
check "without the peers the smoke run still passes" test $? -eq 0
check "the skipped peers are named" sh -c \
    "grep -q 'not built (no oneTBB)' '$SCRATCH/bare.md' &&
     grep -q 'ninja not installed' '$SCRATCH/bare.md'"
finish
