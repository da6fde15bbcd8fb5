#!/bin/sh
# vsched-run --watch through the real process, real files, real inotify
# and the real cc executor: an edit during a slow compile (the stale
# compile is terminated, its refusal counted, only the new output
# published), new, deleted and renamed-over files, a new directory, a
# header edit rebuilding exactly its includers, a burst of 20 saves as one
# rebuild, the state and the report current after the session.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/watch_lib.sh"
scratch
S=$SCRATCH
wtree "$S"
out=$S/out/release/src

# A settle window wide enough that one step's writes stay one build on a
# loaded machine (the default, 5 ms, is what vsched-watch-bench measures).
start_watch "$S" --stats --set watch.settle_ms=100
check "the first build compiles the four inputs" \
    test "$(sort "$S/compiles" | tr '\n' ' ')" = "lib/x/x.c src/a.c src/b.c src/c.c "
check "the first build's objects are there" \
    test "$(symbols "$out/b.c.o")" = "b_v1 "
check "the watch says it watches the tree's directories" \
    grep -q "^vsched-run: watching $S/tree (5 directories); Ctrl-C stops\$" "$S/watch.out"

# ---- an edit during a slow compile ---------------------------------------
: >"$S/compiles"
printf 'int b_slow(void) { return 2; } /* WAIT_FOR_GO */\n' >"$S/tree/src/b.c"
wait_for "the slow compile runs" test -s "$S/slow.pid"
slow=$(cat "$S/slow.pid" 2>/dev/null)
check "the slow compiler is running" kill -0 "${slow:-0}"
printf 'int b_v3(void) { return 3; }\n' >"$S/tree/src/b.c"
wait_rounds "$S" 1
check "the stale compile's process is gone (terminated, never told to go)" \
    sh -c "test -n '$slow' && ! kill -0 '$slow' 2>/dev/null && test ! -e '$S/go'"
check "b.c was compiled twice: the stale content, then the new one" \
    test "$(cat "$S/compiles" | tr '\n' ' ')" = "src/b.c src/b.c "
check "only the new content's object is published" \
    test "$(symbols "$out/b.c.o")" = "b_v3 "
check "the stale completion is refused and counted in --stats" \
    grep -q '^stats: .*stale_completion_refusals=1 ' "$S/watch.out"
check "the rebuild's line: one file changed (twice), one rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 1 rebuilt, 0 failed"
check "no partial output is left beside the objects" \
    test "$(ls -A "$out")" = "a.c.o
b.c.o
c.c.o"
check "nothing is reported failed" \
    sh -c "grep -q '^watch: ' '$S/watch.out' && ! grep -q FAILED '$S/watch.out'"

# ---- a new file, a deleted file ---------------------------------------------
n=$(watch_lines "$S")
printf 'int d_v1(void) { return 4; }\n' >"$S/tree/src/d.c"
wait_rounds "$S" $((n + 1))
check "a new input is built" test "$(symbols "$out/d.c.o")" = "d_v1 "
check "new file: 1 changed, 1 rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 1 rebuilt, 0 failed"
rm "$S/tree/src/d.c"
wait_rounds "$S" $((n + 2))
check "a deleted input's object is removed" \
    sh -c "test -e '$out/b.c.o' && test ! -e '$out/d.c.o'"
check "the removal is said" \
    grep -q "^vsched-run: removed $out/d.c.o (src/d.c \[release\] is no longer an input)" "$S/watch.out"
check "deleted file: 1 changed, 0 rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 0 rebuilt, 0 failed"

# ---- an editor's save: write a temporary, rename it over the file ----------
: >"$S/compiles"
printf 'int a_v2(void) { return 5; }\n' >"$S/tree/src/.a.c.swp"
printf '#include "h.h"\nint a_v2(void) { return H; }\n' >"$S/tree/src/a.c.tmp1234"
mv "$S/tree/src/a.c.tmp1234" "$S/tree/src/a.c"
rm "$S/tree/src/.a.c.swp"
wait_rounds "$S" $((n + 3))
check "a rename over the file rebuilds it" test "$(symbols "$out/a.c.o")" = "a_v2 "
check "rename save: only a.c compiled" test "$(cat "$S/compiles")" = "src/a.c"
check "rename save: the temporary is not counted, the hidden file not seen" \
    test "$(last_line "$S")" = "watch: 1 changed, 1 rebuilt, 0 failed"

# ---- a header edit rebuilds exactly its includers -------------------------
: >"$S/compiles"
printf '#define H 2\n' >"$S/tree/include/h.h"
wait_rounds "$S" $((n + 4))
check "header edit compiles exactly its includers" \
    test "$(sort "$S/compiles" | tr '\n' ' ')" = "src/a.c src/c.c "
check "the report says so" \
    test "$(jq -r '.files[] | select(.rebuilt) | .path' "$S/watch.json" | sort | tr '\n' ' ')" = "src/a.c src/c.c "
check "header edit: 1 changed, 2 rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 2 rebuilt, 0 failed"

# ---- a directory created later, with a file in it -------------------------
lib=$S/out/release/lib
n=$(watch_lines "$S")
mkdir "$S/tree/lib/y"
printf 'int y_v1(void) { return 6; }\n' >"$S/tree/lib/y/y.c"
wait_for "lib/y/y.c is built" \
    sh -c "nm '$lib/y/y.c.o' 2>/dev/null | grep -q ' T y_v1\$'"
# The object is published before the round's summary line is printed,
# and a loaded machine may split the mkdir and the write into two rounds:
# wait for the line, then until no further round follows.
wait_rounds "$S" $((n + 1))
quiet_rounds "$S"
check "a file in a new directory is built" test "$(symbols "$lib/y/y.c.o")" = "y_v1 "
n=$(watch_lines "$S")
printf 'int y_v2(void) { return 7; }\n' >"$S/tree/lib/y/y.c"
wait_rounds "$S" $((n + 1))
check "new directory: its file is the one change" \
    grep -q '^watch: 1 changed, 1 rebuilt, 0 failed' "$S/watch.out"
check "the new directory is watched: an edit in it rebuilds" \
    test "$(symbols "$lib/y/y.c.o")" = "y_v2 "

# ---- a failure prints as in a normal run, and the watch goes on ------------
n=$(watch_lines "$S")
printf 'int c_broken(void) { return }\n' >"$S/tree/src/c.c"
wait_rounds "$S" $((n + 1))
check "a compile error is printed with the compiler's diagnostic" \
    grep -q "src/c.c:1:.*error" "$S/watch.out"
check "compile error: 1 changed, 0 rebuilt, 1 failed" \
    test "$(last_line "$S")" = "watch: 1 changed, 0 rebuilt, 1 failed"
printf '#include "h.h"\nint c_v2(void) { return H; }\n' >"$S/tree/src/c.c"
wait_rounds "$S" $((n + 2))
check "the fix is built" test "$(symbols "$out/c.c.o")" = "c_v2 "
stop_watch
check "SIGINT ends the watch with 130" test "$WATCH_RC" -eq 130
check "the state is current: a plain run afterwards has nothing to do" \
    test "$(vsched_run --config "$S/b.ini" 2>&1)" = "vsched-run: nothing to do"

# ---- a burst of 20 saves is one rebuild -----------------------------------
# (20 separate writes, each open-truncate-write-close; a settle window
# wider than their gaps even on a loaded machine)
start_watch "$S" --set watch.settle_ms=150
: >"$S/compiles"
i=1
while [ $i -le 20 ]; do
    printf 'int b_burst%d(void) { return %d; }\n' $i $i >"$S/tree/src/b.c"
    i=$((i + 1))
done
wait_rounds "$S" 1
sleep 0.3 # a second rebuild, if there were one, would be done by now
check "20 saves: one rebuild" test "$(watch_lines "$S")" -eq 1
check "20 saves: one compile, of the last content" \
    test "$(cat "$S/compiles")" = "src/b.c"
check "20 saves: the object is the last save's" \
    test "$(symbols "$out/b.c.o")" = "b_burst20 "
check "20 saves: 1 changed, 1 rebuilt" \
    test "$(last_line "$S")" = "watch: 1 changed, 1 rebuilt, 0 failed"
stop_watch
check "SIGINT ends the second watch with 130" test "$WATCH_RC" -eq 130
finish
