#!/bin/sh
# A compile error fails the build with exit 1 and shows the compiler's own
# message; -k decides whether the rest is built.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$SCRATCH/"
chmod -R u+w "$SCRATCH" # sources are read-only under distcheck
ini="$SCRATCH/conf/example.ini"
printf 'int broken(void) { return missing_symbol_xyz; }\n' \
    >"$SCRATCH/examples/hello/src/zz_broken.c"

vsched_run --config "$ini" -k 0 >"$SCRATCH/out" 2>&1
rc=$?
cat "$SCRATCH/out"
check "compile error exits 1" test "$rc" -eq 1
check "the failing file is named" grep -q "FAILED: src/zz_broken.c" "$SCRATCH/out"
check "the compiler's message is shown" grep -q "missing_symbol_xyz" "$SCRATCH/out"
check "the compiler's error text is shown whole" grep -q "error:" "$SCRATCH/out"
check "summary counts the failure" grep -q ", 1 failed" "$SCRATCH/out"
nsrc=$(ls "$SCRATCH"/examples/hello/src/*.c | wc -l)
check "-k 0 builds everything else" \
    test "$(ls "$SCRATCH"/build/hello/release/src/*.o | wc -l)" -eq $((nsrc - 1))
check "no object for the failed file" \
    test ! -e "$SCRATCH/build/hello/release/src/zz_broken.c.o"
check "no temporary outputs left" \
    test -z "$(find "$SCRATCH/build" -name '*.tmp.*')"
check "the failed compile cancels the link, naming the failed file" \
    grep -q "link hello \[release\] not run: dependency 'src/zz_broken.c' failed" \
    "$SCRATCH/out"
check "no program is linked" test ! -e "$SCRATCH/build/hello/release/hello"

# A missing compiler is a build failure with a clear message, not a crash.
rm -rf "$SCRATCH/build"
vsched_run --config "$ini" --set executor.compiler=no-such-cc-xyz \
    >"$SCRATCH/out2" 2>&1
check "missing compiler exits 1" test $? -eq 1
check "missing compiler is named" grep -q "no-such-cc-xyz" "$SCRATCH/out2"
finish
