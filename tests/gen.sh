#!/bin/sh
# vsched-gen: the same options write the same bytes, every file compiles,
# and deps.txt lists exactly the headers the compiler reads.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
scratch
gen="$top_builddir/bench/vsched-gen"

"$gen" --seed 7 --files 40 --headers 12 --dirs 3 --long 2 --funcs 3 "$SCRATCH/a"
"$gen" --seed 7 --files 40 --headers 12 --dirs 3 --long 2 --funcs 3 "$SCRATCH/b"
"$gen" --seed 8 --files 40 --headers 12 --dirs 3 --long 2 --funcs 3 "$SCRATCH/c"
check "same seed, same tree" diff -r "$SCRATCH/a" "$SCRATCH/b"
check "another seed, another tree" sh -c "! diff -rq '$SCRATCH/a' '$SCRATCH/c' >/dev/null"
check "40 sources listed" test "$(wc -l < "$SCRATCH/a/sources.txt")" -eq 40
check "headers in three levels" test -f "$SCRATCH/a/include/l3/h011.h"

# deps.txt against the compiler's own view (-MM, as one line per file).
ok=1
while read -r src; do
    want=$(cd "$SCRATCH/a" && cc -MM -Iinclude "$src" | tr -d '\\\n' |
        sed 's/^[^:]*://' | tr ' ' '\n' | grep -v "^$" | grep -v '\.c$' | sort)
    got=$(grep "^$src:" "$SCRATCH/a/deps.txt" | sed 's/^[^:]*://' |
        tr ' ' '\n' | grep -v "^$" | sort)
    [ "$want" = "$got" ] || { echo "deps of $src differ"; ok=0; }
done < "$SCRATCH/a/sources.txt"
check "deps.txt equals cc -MM" test "$ok" -eq 1

# The tree links and runs.
(cd "$SCRATCH/a" && cc -O0 -Iinclude $(cat sources.txt) -o prog) 2>"$SCRATCH/cc.err"
check "the tree links" test -x "$SCRATCH/a/prog"
check "and runs" sh -c "'$SCRATCH/a/prog' | grep -q '^[0-9][0-9]*$'"
check "a long file is longer" test "$(wc -c < "$SCRATCH/a/src/d0/f0000.c")" -gt \
    "$(( 5 * $(wc -c < "$SCRATCH/a/src/d2/f0005.c") ))"
finish
