#!/bin/sh
# The shell tests' scratch directory (tests/lib.sh's scratch), under each
# shell a test may run under (make check's $(SHELL); dash and bash here):
#   - only the test's own EXIT trap removes it, at the test's exit: a
#     subshell, a command substitution, a pipeline, sh -c, a background
#     job -- ending, or killed by SIGINT, SIGTERM or SIGHUP -- leaves it
#     (a dash 0.5.12 or bash 5.2 subshell does not run the EXIT trap it
#     inherited);
#   - when it vanishes mid-run anyway, the first failure says so, once,
#     with the processes of that moment; while it is there, a failure
#     says nothing more.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH

# child.sh NAMEFILE: makes a scratch, writes its path to NAMEFILE, runs
# every kind of child shell, checks after each that the scratch is there.
cat >"$S/child.sh" <<'EOF'
. "$top_srcdir/tests/lib.sh"
scratch
echo "$SCRATCH" >"$1"
here() { test -d "$SCRATCH"; }
hit() { test -e "$SCRATCH/sent" && here; }
# killer SIG: signal the pid that appears in $SCRATCH/pid (from outside
# the process it names); $SCRATCH/sent once it is sent.
killer() {
    rm -f "$SCRATCH/pid" "$SCRATCH/sent"
    (
        i=0
        while [ ! -s "$SCRATCH/pid" ] && [ $i -lt 500 ]; do
            sleep 0.01
            i=$((i + 1))
        done
        sleep 0.05
        kill -"$1" "$(cat "$SCRATCH/pid")" && : >"$SCRATCH/sent"
    ) &
}
me() { sh -c 'echo $PPID' >"$SCRATCH/pid.new" && mv "$SCRATCH/pid.new" "$SCRATCH/pid"; }
( : )
check "a subshell" here
( exit 3 )
check "a subshell that exits 3" here
x=$(echo x)
check "a command substitution" here
x=$(echo x | tr x y)
check "a pipeline in a command substitution" here
f() { echo x; }
f | cat >/dev/null
check "a function in a pipeline" here
sh -c 'exit 0'
check "sh -c" here
(sleep 0.01) &
wait $!
check "a background subshell" here
for sig in INT TERM HUP; do
    # (bash's command substitution answers SIGHUP by sending it to its
    # whole process group -- the test's, make's: that one is left out)
    if [ $sig != HUP ]; then
        killer $sig
        x=$(me; sleep 0.5; echo x)
        wait
        check "a command substitution sent SIG$sig" hit
    fi
    killer $sig
    (me; sleep 0.5; :)
    wait
    check "a subshell sent SIG$sig" hit
    killer $sig
    (me; sleep 0.5; :) &
    wait
    check "a background subshell sent SIG$sig" hit
done
finish
EOF

# gone.sh: removes its scratch behind the EXIT trap's back, then fails
# twice; nogone.sh: fails once with its scratch there.
cat >"$S/gone.sh" <<'EOF'
. "$top_srcdir/tests/lib.sh"
scratch
rmdir "$SCRATCH"
check "a first check" test -e "$SCRATCH/x"
check "a second check" test -e "$SCRATCH/y"
finish
EOF
cat >"$S/nogone.sh" <<'EOF'
. "$top_srcdir/tests/lib.sh"
scratch
check "a check" false
finish
EOF

for sh in dash bash; do
    if ! command -v $sh >/dev/null 2>&1; then
        echo "SKIP: $sh is not installed: its checks did not run"
        continue
    fi
    $sh "$S/child.sh" "$S/name.$sh" >"$S/child.$sh.out" 2>&1
    rc=$?
    sed 's/^/    | /' "$S/child.$sh.out"
    check "$sh: every child shell left the scratch directory (exit 0)" test $rc -eq 0
    check "$sh: all 15 checks ran and passed" \
        test "$(grep -c '^PASS: ' "$S/child.$sh.out")/$(grep -c '^FAIL' "$S/child.$sh.out")" = "15/0"
    d=$(cat "$S/name.$sh" 2>/dev/null)
    check "$sh: the scratch directory existed" test -n "$d"
    check "$sh: ... and the EXIT trap removed it at the test's end" test ! -e "${d:-/}"

    $sh "$S/gone.sh" >"$S/gone.$sh.out" 2>&1
    check "$sh: a test whose scratch vanished fails" test $? -eq 1
    check "$sh: ... the first failure says the scratch is gone, once" \
        test "$(grep -c '^FAIL: the scratch directory /.* is gone (made by this test at [0-9:.]*, kept until its exit); the processes at this moment:$' "$S/gone.$sh.out")" = 1
    check "$sh: ... right after the first failing check" \
        test "$(sed -n 2p "$S/gone.$sh.out" | cut -c1-27)" = "FAIL: the scratch directory"
    check "$sh: ... and shows the processes, the test among them" \
        grep -q "^    | .*$sh $S/gone.sh\$" "$S/gone.$sh.out"
    check "$sh: ... counting it as a failure" \
        grep -q '^0 passed, 3 failed$' "$S/gone.$sh.out"

    $sh "$S/nogone.sh" >"$S/nogone.$sh.out" 2>&1
    check "$sh: a failure with the scratch there says only that" \
        test "$(cat "$S/nogone.$sh.out")" = "FAIL: a check
0 passed, 1 failed"
done
finish
