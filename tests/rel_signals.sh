#!/bin/sh
# Signals: SIGINT and SIGTERM cancel the run, every compiler's process
# group is terminated, temporaries are removed and the run exits 130; a
# second signal ends it at once, still killing the compilers; SIGPIPE (a
# reader that went away, `| head -1`) ends the run quietly; temporaries a
# killed run left behind are removed by the next run.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$S/"
chmod -R u+w "$S"
ini="$S/conf/example.ini"
# slowcc: writes its output at once (a partial object), notes its pid,
# then sleeps before compiling; `sleep` is a child in the same group.
mkdir -p "$S/pids"
cat >"$S/slowcc" <<EOF
#!/bin/sh
if [ "\$1" = --version ]; then echo "slowcc 1"; exit 0; fi
out=
prev=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
[ -n "\$out" ] && : >"\$out"
echo \$\$ >"$S/pids/\$\$"
[ -e "$S/ignore-term" ] && trap '' TERM
sleep "\$(cat "$S/delay")"
exec cc "\$@"
EOF
chmod +x "$S/slowcc"
echo 30 >"$S/delay"
sed -i "s|^compiler = cc\$|compiler = $S/slowcc|" "$ini"

# alive: the number of slowcc processes (or their sleeps) still running.
alive() {
    n=0
    for f in "$S"/pids/*; do
        [ -e "$f" ] || continue
        p=$(cat "$f")
        # a process group of that pid still has members
        if pgrep -g "$p" >/dev/null 2>&1; then n=$((n + 1)); fi
    done
    echo $n
}
# started: wait (up to 30 s) until a compiler runs.
started() {
    i=0
    while [ -z "$(ls "$S/pids")" ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -n "$(ls "$S/pids")" ]
}
# gone_within N: wait until no compiler is left, up to N tenths.
gone_within() {
    i=0
    while [ "$(alive)" -ne 0 ] && [ $i -lt "$1" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ "$(alive)" -eq 0 ]
}
tmps() { find "$S/build" -name '*.tmp.*' 2>/dev/null | wc -l; }

for sig in INT TERM; do
    rm -rf "$S/build" "$S/pids"/*
    "$top_builddir/vsched-run" --config "$ini" >"$S/$sig.out" 2>&1 &
    pid=$!
    started || fail "SIG$sig: a compiler started"
    kill -$sig $pid
    wait $pid
    rc=$?
    check "SIG$sig: exits 130" test $rc -eq 130
    check "SIG$sig: every compiler's process group is gone" gone_within 30
    check "SIG$sig: no temporary left" test "$(tmps)" -eq 0
    check "SIG$sig: says it was interrupted" grep -qi "interrupt" "$S/$sig.out"
done

# A second signal: the run ends at once, and still takes its compilers
# (these ignore SIGTERM, so the first signal's cancel is still waiting
# to SIGKILL them when the second one comes).
rm -rf "$S/build" "$S/pids"/*
: >"$S/ignore-term"
"$top_builddir/vsched-run" --config "$ini" >"$S/twice.out" 2>&1 &
pid=$!
started || fail "second signal: a compiler started"
kill -INT $pid
sleep 0.3 # two pending SIGINTs would be one
kill -INT $pid
wait $pid
rc=$?
check "a second signal exits 130" test $rc -eq 130
check "a second signal still ends every compiler's group" gone_within 30
rm -f "$S/ignore-term"

# A run killed outright (SIGKILL) leaves its temporaries; the next run
# removes them (their writer is dead) and builds.
rm -rf "$S/build" "$S/pids"/*
"$top_builddir/vsched-run" --config "$ini" >/dev/null 2>&1 &
pid=$!
started || fail "SIGKILL: a compiler started"
sleep 0.3
kill -KILL $pid
wait $pid 2>/dev/null
for f in "$S"/pids/*; do kill -KILL -"$(cat "$f")" 2>/dev/null; done
check "a killed run leaves temporaries behind" test "$(tmps)" -gt 0
# A temporary of a live process is not touched.
mkdir -p "$S/build/hello/release/src"
sleep 60 &
live=$!
: >"$S/build/hello/release/src/x.o.tmp.$live.00123456789abcdef"
echo 0 >"$S/delay"
rm -f "$S"/pids/*
# The modes that write nothing remove nothing either: the executor sweeps
# when it first writes an output, not when it is created.
before=$(tmps)
for mode in -n --compdb --graph --deps; do
    vsched_run --config "$ini" $mode >"$S/dry.out" 2>&1
    check "$mode succeeds" test $? -eq 0
    check "... and leaves the dead run's temporaries" test "$(tmps)" -eq "$before"
done
vsched_run --config "$ini" >"$S/next.out" 2>&1
rc=$?
check "the next run succeeds" test $rc -eq 0
check "the next run removed the dead run's temporaries" \
    test "$(find "$S/build" -name '*.tmp.*' ! -name "*.tmp.$live.*" | wc -l)" -eq 0
check "a live process's temporary is kept" \
    test -e "$S/build/hello/release/src/x.o.tmp.$live.00123456789abcdef"
kill $live 2>/dev/null
wait $live 2>/dev/null
rm -f "$S/build/hello/release/src/x.o.tmp.$live.00123456789abcdef"

# SIGPIPE: a reader that stops reading ends the run quietly.
rm -rf "$S/build"
echo 1 >"$S/delay"
"$top_builddir/vsched-run" --config "$ini" 2>"$S/pipe.err" |
    head -1 >"$S/pipe.out"
check "| head -1 gets one line" test "$(wc -l <"$S/pipe.out")" -eq 1
check "| head -1: nothing on stderr" test ! -s "$S/pipe.err"
check "| head -1: no compiler is left" gone_within 50
check "| head -1: no temporary left" test "$(tmps)" -eq 0
finish
