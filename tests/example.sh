#!/bin/sh
# The bundled example builds end to end with vsched-run, and rebuilding it
# works. Runs in a scratch copy so the source tree stays clean.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$SCRATCH/"
chmod -R u+w "$SCRATCH" # sources are read-only under distcheck
ini="$SCRATCH/conf/example.ini"
out="$SCRATCH/build/hello"

vsched_run --config "$ini" >"$SCRATCH/run1.out" 2>&1
rc=$?
cat "$SCRATCH/run1.out"
check "first build exits 0" test "$rc" -eq 0
nsrc=$(ls "$SCRATCH"/examples/hello/src/*.c | wc -l)
check "example has several sources" test "$nsrc" -ge 3
nobj=$(ls "$out"/release/src/*.o 2>/dev/null | wc -l)
check "one object per source under out_dir/release" test "$nobj" -eq "$nsrc"
check "summary line counts every source" \
    grep -q "vsched-run: $nsrc built, 0 failed" "$SCRATCH/run1.out"
check "plain progress lines when not on a terminal" \
    grep -q "^\[1/$nsrc\] artifact release src/" "$SCRATCH/run1.out"
check "no temporary outputs left" \
    test -z "$(find "$out" -name '*.tmp.*')"

vsched_run --config "$ini" >"$SCRATCH/run2.out" 2>&1
check "rebuilding exits 0" test $? -eq 0
check "a rebuild with nothing changed has nothing to do" \
    sh -c "grep -qx 'vsched-run: nothing to do' '$SCRATCH/run2.out' &&
           test \$(wc -l < '$SCRATCH/run2.out') -eq 1"

# [batch] link = hello: one graph job, after every object, links them.
check "the link job is reported" \
    grep -q "vsched-run: linked $out/release/hello" "$SCRATCH/run1.out"
check "the link produced the program" test -x "$out/release/hello"
"$out/release/hello" >"$SCRATCH/hello.out" 2>&1
check "the program runs" test $? -eq 0
check "the program prints its greeting" \
    grep -q "^hello, vsched" "$SCRATCH/hello.out"

vsched_run --config "$ini" --profile debug -q >"$SCRATCH/q.out" 2>&1
check "--profile debug builds into out_dir/debug" \
    test "$(ls "$out"/debug/src/*.o | wc -l)" -eq "$nsrc"
check "-q prints nothing on success" test ! -s "$SCRATCH/q.out"
"$top_builddir/vsched-run" --help >"$SCRATCH/help.out"
check "--help says -q prints a good run's nothing" \
    sh -c "sed -n '/-q, --quiet/,/--color/p' '$SCRATCH/help.out' | tr -s ' \n' ' ' | grep -q 'a good run prints nothing'"

vsched_run --config "$ini" -n --set "vsched.state_dir=$SCRATCH/fresh" \
    >"$SCRATCH/n.out" 2>&1
check "-n prints the plan" grep -q "^artifact release src/.*: new$" "$SCRATCH/n.out"
check "-n plans one line per source" \
    test "$(grep -c '^artifact ' "$SCRATCH/n.out")" -eq "$nsrc"
check "-n plans the link last" \
    sh -c "tail -n 1 '$SCRATCH/n.out' | grep -qx 'link release hello: new'"
check "-n writes no state" test ! -e "$SCRATCH/fresh"
vsched_run --config "$ini" -n >"$SCRATCH/n2.out" 2>&1
check "-n on a current build has nothing to do" \
    grep -qx "vsched-run: nothing to do" "$SCRATCH/n2.out"

vsched_run --config "$ini" --set profile.release.cflags=-O0 -j 1 --stats \
    >"$SCRATCH/set.out" 2>&1
check "--set and -j are accepted" test $? -eq 0
# Durations are known from the build before: the include scan goes first
# as an atomic batch of its own (src/host/build/batch.c), then the
# compiles, then the link DAG.
check "--stats prints counters" grep -q "submit_count=3 " "$SCRATCH/set.out"
check "--stats prints occupancy with capacity" \
    grep -q "^stats: occupancy files=6 graph_nodes=[0-9]* edges=0/[0-9]* waiters=0/" "$SCRATCH/set.out"
check "the build is a scan batch, one atomic batch, one link DAG, one coordinator batch" \
    grep -q "submit_count=3 batch_submissions=1 " "$SCRATCH/set.out"

vsched_run --config "$ini" src/main.c >"$SCRATCH/one.out" 2>&1
check "FILES narrow the build" grep -q "vsched-run: 1 built" "$SCRATCH/one.out"
check "FILES build objects only, no link" \
    sh -c "! grep -q 'linked' '$SCRATCH/one.out'"

# --deps: one line per input, in input order, each file's resolved deps;
# one batch through the coordinator, built nothing.
rm -rf "$SCRATCH/build"
vsched_run --config "$ini" --deps --stats >"$SCRATCH/deps.out" 2>&1
check "--deps exits 0" test $? -eq 0
printf '%s\n' "src/fmt.c: include/util/fmt.h" "src/greet.c: include/greet.h" \
    "src/main.c: include/greet.h" >"$SCRATCH/deps.want"
grep -v '^stats:' "$SCRATCH/deps.out" >"$SCRATCH/deps.got"
check "--deps prints each input's deps in input order" \
    cmp -s "$SCRATCH/deps.want" "$SCRATCH/deps.got"
check "--deps is one coordinator batch" \
    grep -q "batch_submissions=1 " "$SCRATCH/deps.out"
check "--deps builds nothing" test ! -d "$out/release"
vsched_run --config "$ini" --deps src/main.c src/nope.c include/greet.h \
    >"$SCRATCH/deps2.out" 2>&1
check "--deps with a missing file exits 2, before any work" test $? -eq 2
check "... naming it" grep -q "^vsched-run: 'src/nope.c' is no target and no file under " \
    "$SCRATCH/deps2.out"
# A FIFO exists but is no source: the loader refuses it, one file fails.
mkfifo "$SCRATCH/examples/hello/src/pipe.c"
vsched_run --config "$ini" --deps src/main.c src/pipe.c include/greet.h \
    >"$SCRATCH/deps3.out" 2>&1
check "--deps with a file that cannot be loaded exits 1" test $? -eq 1
rm -f "$SCRATCH/examples/hello/src/pipe.c"
printf '%s\n' "src/main.c: include/greet.h" \
    "include/greet.h: include/util/fmt.h" >"$SCRATCH/deps2.want"
check "--deps FILES keep their order around a failure" \
    sh -c "sed -n '1p;3p' '$SCRATCH/deps3.out' | cmp -s - '$SCRATCH/deps2.want'"
check "--deps names the failed file" \
    sh -c "sed -n 2p '$SCRATCH/deps3.out' | grep -q '^src/pipe.c: error: '"
vsched_run --config "$ini" --deps \
    --set vsched.coordinator_threads=1 >"$SCRATCH/deps1.out" 2>&1
check "--deps on a 1-thread coordinator prints the same" \
    cmp -s "$SCRATCH/deps.want" "$SCRATCH/deps1.out"

vsched_run --config "$SCRATCH/nope.ini" >"$SCRATCH/e.out" 2>&1
check "missing config exits 2" test $? -eq 2
check "missing config is named" grep -q "nope.ini: cannot read" "$SCRATCH/e.out"

vsched_run --config "$ini" --set nonsense >"$SCRATCH/e.out" 2>&1
check "malformed --set exits 2" test $? -eq 2

vsched_run --bogus >"$SCRATCH/e.out" 2>&1
check "unknown option exits 2" test $? -eq 2
check "unknown option is named" grep -q "unknown option '--bogus'" "$SCRATCH/e.out"

vsched_run --config "$ini" --list-plugins >"$SCRATCH/l.out" 2>&1
check "--list-plugins names the built-ins" \
    sh -c "grep -q '^fs ' '$SCRATCH/l.out' && grep -q '^cc ' '$SCRATCH/l.out' && grep -q '^null ' '$SCRATCH/l.out'"
vsched_run --describe-plugin cc >"$SCRATCH/d.out" 2>&1
check "--describe-plugin prints the schema" grep -q "out_dir" "$SCRATCH/d.out"
vsched_run --version | grep -q "plugin ABI 1.1"
check "--version names the ABI" test $? -eq 0
finish
