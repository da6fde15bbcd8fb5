#!/bin/sh
# vsched-run --watch at its edges, through the real process: SIGINT
# during a slow compile (130, the compiler gone, no partial output, the
# state consistent), the watched root going away (exit 1), and the kernel's
# inotify limits -- max_user_watches and max_user_instances, lowered for
# real in a user namespace of our own -- falling back to polling that
# still rebuilds.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/watch_lib.sh"
scratch
S=$SCRATCH
wtree "$S"
out=$S/out/release/src

# ---- SIGINT during a slow compile -------------------------------------------
start_watch "$S"
printf 'int b_slow(void) { return 2; } /* WAIT_FOR_GO */\n' >"$S/tree/src/b.c"
wait_for "the slow compile runs" test -s "$S/slow.pid"
slow=$(cat "$S/slow.pid" 2>/dev/null)
check "the slow compiler is running" kill -0 "${slow:-0}"
stop_watch
check "SIGINT during a compile exits 130" test "$WATCH_RC" -eq 130
check "the interrupted compiler is gone" \
    sh -c "test -n '$slow' && ! kill -0 '$slow' 2>/dev/null"
check "no partial output is left; the old object stays" \
    test "$(ls -A "$out" | tr '\n' ' ')/$(symbols "$out/b.c.o")" = "a.c.o b.c.o c.c.o /b_v1 "
touch "$S/go"
vsched_run --config "$S/b.ini" --report "$S/after.json" >"$S/after.out" 2>&1
check "the next plain run rebuilds exactly the interrupted file" \
    test "$(jq -r '.files[] | select(.rebuilt) | .path' "$S/after.json")" = "src/b.c"
check "... and publishes its object" test "$(symbols "$out/b.c.o")" = "b_slow "
rm -f "$S/go" "$S/slow.pid"

# ---- SIGINT between builds ---------------------------------------------------
start_watch "$S"
stop_watch
check "SIGINT while waiting for changes exits 130" test "$WATCH_RC" -eq 130
sed 's/^/    | /' "$S/watch.out" # (shown: what the next check compares)
check "... and says nothing but the first build and the banner" \
    test "$(cat "$S/watch.out")" = "vsched-run: nothing to do
vsched-run: watching $S/tree (5 directories); Ctrl-C stops"

# ---- the root goes away -----------------------------------------------------
start_watch "$S"
mv "$S/tree" "$S/tree.away"
end_watch
rc=$WATCH_RC
mv "$S/tree.away" "$S/tree"
check "a root moved away ends the watch with 1" test "$rc" -eq 1
check "... saying what happened and what to do" \
    grep -q "^vsched-run: watch: the source root $S/tree was removed or moved away; stopping (run vsched-run --watch again once it is back)\$" "$S/watch.out"

# ---- the kernel's limits -----------------------------------------------------
# In a user namespace of its own, root may lower the namespace's inotify
# limits (user.max_inotify_watches, _instances): the real kernel check,
# without touching the machine's.
if ! unshare -U -r sh -c 'echo 3 >/proc/sys/user/max_inotify_watches' 2>/dev/null; then
    echo "SKIP: no user namespace here (unshare -U -r): the limit checks did not run"
    finish
    exit $?
fi
# limited WHAT N [options]: vsched-run --watch with that limit.
limited() {
    _what=$1
    _n=$2
    shift 2
    : >"$S/compiles"
    watch_out_fresh "$S"
    unshare -U -r sh -c "echo $_n >/proc/sys/user/max_inotify_$_what && exec \"\$0\" \"\$@\"" \
        "$top_builddir/vsched-run" --config "$S/b.ini" --watch \
        --set watch.poll_interval_ms=50 "$@" >"$S/watch.out" 2>&1 &
    WATCH_PID=$!
    wait_for "the watch starts" grep -q '^vsched-run: watching' "$S/watch.out"
}
limited watches 3
check "watch limit: the message names the sysctl, the count and the interval" \
    grep -q "^vsched-run: watch: cannot watch $S/tree/.*: the inotify watch limit is reached after 3 directories (fs.inotify.max_user_watches = [0-9]*); raise it (sysctl fs.inotify.max_user_watches=524288); polling the tree every 50 ms instead\$" "$S/watch.out"
check "watch limit: the banner says it polls" \
    grep -q "^vsched-run: watching $S/tree by polling; Ctrl-C stops\$" "$S/watch.out"
printf 'int b_poll(void) { return 8; }\n' >"$S/tree/src/b.c"
wait_rounds "$S" 1
check "polling: an edit is rebuilt" test "$(symbols "$out/b.c.o")" = "b_poll "
check "polling: 1 changed, 1 rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 1 rebuilt, 0 failed"
printf 'int d_poll(void) { return 9; }\n' >"$S/tree/src/d.c"
wait_rounds "$S" 2
check "polling: a new file is built" test "$(symbols "$out/d.c.o")" = "d_poll "
rm "$S/tree/src/d.c"
wait_rounds "$S" 3
check "polling: a deleted file's object is removed" test ! -e "$out/d.c.o"
mv "$S/tree" "$S/tree.away"
end_watch
rc=$WATCH_RC
mv "$S/tree.away" "$S/tree"
check "polling: a root moved away ends the watch with 1" test "$rc" -eq 1

limited instances 0
check "instance limit: the message names fs.inotify.max_user_instances" \
    grep -q "^vsched-run: watch: no inotify instance is left (.*); the limit is fs.inotify.max_user_instances = [0-9]*: raise it (sysctl fs.inotify.max_user_instances=1024) or stop other watchers; polling the tree every 50 ms instead\$" "$S/watch.out"
printf 'int b_poll2(void) { return 10; }\n' >"$S/tree/src/b.c"
wait_rounds "$S" 1
check "instance limit: polling rebuilds an edit" test "$(symbols "$out/b.c.o")" = "b_poll2 "
stop_watch
check "polling: SIGINT exits 130" test "$WATCH_RC" -eq 130
finish
