#!/bin/sh
# Outputs published (renamed into place) by a run killed before it
# recorded them in the state database. Such a file has no record that
# vouches for it, so the next run must not trust it: the next run (or
# --clean) removes it before anything reads it, an input it belongs to
# is rebuilt (never "up to date" and never served from the cache through
# it), and the output of a file that left the build goes as every such
# output does. The kill lands between publication and record every time:
# VSCHED_TEST_RECORDER_HOLD (test-only, src/host/build/recorder.c) names
# a file while which the recorder records nothing.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
mkdir -p "$S/src"
cc_ini "$S/p.ini"
printf '[cache]\ndir = cache\n' >>"$S/p.ini"
V1='int a(void) { return 1; }'
V2='int a(void) { return 2; }'
printf '%s\n' "$V1" >"$S/src/a.c"
printf 'int b(void) { return 3; }\n' >"$S/src/b.c"
vsched_run --config "$S/p.ini" >"$S/o1" 2>&1
check "the first run builds (exit 0)" test $? -eq 0
O="$S/out/release"

# published: wait (up to 20 s) until every named output exists.
published() {
    i=0
    while [ $i -lt 200 ]; do
        ok=1
        for f in "$@"; do [ -e "$f" ] || ok=0; done
        [ $ok -eq 1 ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# killed_after_publish OUTPUTS...: a run that publishes them, killed
# (SIGKILL) before it records anything.
killed_after_publish() {
    : >"$S/hold"
    VSCHED_TEST_RECORDER_HOLD="$S/hold" \
        "$top_builddir/vsched-run" --config "$S/p.ini" >"$S/killed.out" 2>&1 &
    pid=$!
    published "$@" || fail "the held run published $*"
    kill -KILL $pid
    wait $pid 2>/dev/null
    rm -f "$S/hold"
}

# a.c edited (v2) and a new file n.c, published, not recorded.
printf '%s\n' "$V2" >"$S/src/a.c"
printf 'int n(void) { return 4; }\n' >"$S/src/n.c"
rm -f "$O/a.c.o"
killed_after_publish "$O/a.c.o" "$O/n.c.o"
cc -c -o "$S/a-v2.o" "$S/src/a.c"
check "the killed run published a.c's new object" cmp -s "$S/a-v2.o" "$O/a.c.o"
# A run whose inputs are wrong exits 2 and removes nothing: the state is
# read while the inputs are expanded, the journal settled once they are
# found valid.
vsched_run --config "$S/p.ini" --set 'batch.inputs=no/such/*.c' >"$S/o2" 2>&1
check "wrong inputs after the kill: exit 2" test $? -eq 2
check "... and the unrecorded outputs stay for a valid run to settle" \
    test -e "$O/n.c.o" -a -s "$S/state/published"
check "... saying nothing of them" test "$(grep -c removed "$S/o2")" -eq 0
# a.c back to what the record says, n.c gone: the stale v2 object must
# not pass for v1's, and n.c.o must not stay behind.
printf '%s\n' "$V1" >"$S/src/a.c"
rm "$S/src/n.c"
vsched_run --config "$S/p.ini" >"$S/o3" 2>&1
rc=$?
cat "$S/o3"
check "the next run succeeds (exit 0)" test $rc -eq 0
check "it says it removed the unrecorded outputs" \
    grep -q "^vsched-run: removed .*/out/release/n.c.o (published by an earlier run that did not record it)$" "$S/o3"
check "the output of the file that left is gone" test ! -e "$O/n.c.o"
check "a.c's object is not the killed run's" sh -c "! cmp -s '$S/a-v2.o' '$O/a.c.o'"
cc -c -o "$S/a-v1.o" "$S/src/a.c"
check "a.c's object is a build of a.c as it is" cmp -s "$S/a-v1.o" "$O/a.c.o"
vsched_run --config "$S/p.ini" >"$S/o4" 2>&1
check "then nothing is left to do" grep -q "nothing to do" "$S/o4"

# note FILE: the journal's note of FILE as it is now (journal.h).
note() { printf '%s:%s:%s:%s\0' "$(stat -c %i "$1")" "$(stat -c %s "$1")" "$(date -r "$1" +%s%N)" "$1"; }

# Killed after the records were committed but before the journal was
# emptied: a listed output its record vouches for stays, and so does the
# output a note cut short by the kill (no NUL) would name.
{ note "$O/b.c.o"; note "$O/a.c.o" | tr -d '\0'; } >"$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o4b" 2>&1
rc=$?
cat "$S/o4b"
check "recorded outputs listed in the journal are kept (exit 0)" \
    test $rc -eq 0 -a -e "$O/b.c.o" -a -e "$O/a.c.o"
check "and the run has nothing to do" grep -q "nothing to do" "$S/o4b"
check "the journal is emptied" test ! -s "$S/state/published"

# Only the very file a note describes is removed: not one that is no
# output (a note naming some other file, an old note without a stamp),
# not one replaced since.
printf 'mine\n' >"$S/precious"
printf '%s\0' "$S/precious" >"$S/state/published"
printf '1:5:0:%s\0' "$S/precious" >>"$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o4c" 2>&1
check "a note whose stamp is not the file's removes nothing (exit 0)" \
    sh -c "test $? -eq 0 && test -e '$S/precious' && ! grep -q removed '$S/o4c'"
printf 'int r(void) { return 6; }\n' >"$S/src/r.c"
killed_after_publish "$O/r.c.o"
printf 'the user put this here\n' >"$S/r.new" && mv "$S/r.new" "$O/r.c.o"
rm "$S/src/r.c"
vsched_run --config "$S/p.ini" >"$S/o4d" 2>&1
rc=$?
check "an output replaced after the kill is left alone (exit 0)" \
    sh -c "test $rc -eq 0 && grep -qx 'the user put this here' '$O/r.c.o' && ! grep -q removed '$S/o4d'"
rm -f "$O/r.c.o"
# Only files under [executor] out_dir are outputs: a note that describes
# a user's file elsewhere exactly (stamps anyone can read) removes
# nothing, neither by a run nor by --clean; not a source either.
printf 'mine\n' >"$S/precious"
{ note "$S/precious"; note "$S/src/b.c"; } >"$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o4e" 2>&1
rc=$?
check "a note naming a file outside out_dir removes nothing (exit 0)" \
    sh -c "test $rc -eq 0 && test -e '$S/precious' && test -e '$S/src/b.c' && ! grep -q removed '$S/o4e'"
mkdir -p "$S/forged" && cp -R "$S/state" "$S/p.ini" "$S/forged/"
{ note "$S/precious"; note "$S/src/b.c"; } >"$S/forged/state/published"
sed -i "s|^state_dir = .*|state_dir = $S/forged/state|" "$S/forged/p.ini"
sed -i "s|^root = .*|root = $S/src|; s|^out_dir = .*|out_dir = $S/forged/out|" "$S/forged/p.ini"
vsched_run --config "$S/forged/p.ini" --clean >"$S/o4f" 2>&1
rc=$?
check "... nor does --clean (exit 0)" \
    sh -c "test $rc -eq 0 && test -e '$S/precious' && test -e '$S/src/b.c'"
rm -rf "$S/forged"
# Nor through a link inside out_dir: "out/release/x/../f" is resolved as
# the kernel resolves it, through x, so it names a file outside.
mkdir -p "$S/outside/sub"
printf 'mine\n' >"$S/outside/victim"
ln -s "$S/outside/sub" "$O/x"
note "$S/outside/victim" | sed "s|$S/outside/victim|$O/x/../victim|" >"$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o4g" 2>&1
rc=$?
check "a note leaving out_dir through a link and .. removes nothing (exit 0)" \
    sh -c "test $rc -eq 0 && test -e '$S/outside/victim' && ! grep -q removed '$S/o4g'"
# A record of the state database is no more trusted: the output of a file
# that left the inputs, as recorded, is removed only under out_dir.
if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 "$S/state/state.db" "INSERT INTO artifacts SELECT 'gone.c', profile, key, config, tool, deps, '$S/precious', out_mtime_ns, out_ctime_ns, out_size, out_ino, out_hash, duration_ns FROM artifacts LIMIT 1; INSERT INTO artifacts SELECT 'gone2.c', profile, key, config, tool, deps, '$O/x/../victim', out_mtime_ns, out_ctime_ns, out_size, out_ino, out_hash, duration_ns FROM artifacts LIMIT 1;"
    vsched_run --config "$S/p.ini" >"$S/o4h" 2>&1
    rc=$?
    cat "$S/o4h"
    check "a record naming a file outside out_dir: the run keeps it (exit 0)" \
        sh -c "test $rc -eq 0 && test -e '$S/precious' && test -e '$S/outside/victim'"
    check "... and says so" grep -q "^vsched-run: kept $S/precious: it is not under \[executor\] out_dir$" "$S/o4h"
else
    fail "sqlite3 is not installed (tools/setup installs it)"
fi
rm -f "$O/x"

# The same kill, then --clean: the unrecorded output goes too.
printf 'int m(void) { return 5; }\n' >"$S/src/m.c"
killed_after_publish "$O/m.c.o"
# -n lists what the run would remove, and removes nothing.
vsched_run --config "$S/p.ini" -n >"$S/o5n" 2>&1
rc=$?
check "-n after a killed run lists the unrecorded output (exit 0)" sh -c \
    "test $rc -eq 0 && grep -qx 'remove $O/m.c.o (published by an earlier run that did not record it)' '$S/o5n'"
check "... and leaves it, and the journal, as they are" \
    test -e "$O/m.c.o" -a -s "$S/state/published"
# A database an earlier run found corrupt and moved aside is state too.
printf 'a database found corrupt\n' >"$S/state/state.db.corrupt"
printf 'its WAL\n' >"$S/state/state.db.corrupt-wal"
vsched_run --config "$S/p.ini" --clean >"$S/o5" 2>&1
rc=$?
cat "$S/o5"
check "--clean after a killed run succeeds" test $rc -eq 0
check "--clean removes the unrecorded output too" test ! -e "$O/m.c.o"
check "and the recorded ones" test ! -e "$O/a.c.o" -a ! -e "$O/b.c.o"
check "... and leaves no journal behind" test ! -e "$S/state/published"
check "... nor a database moved aside: only the lock stays" \
    test "$(ls -A "$S/state")" = lock
# A record naming a directory under out_dir (a forged state): --clean
# keeps the directory and says why, in words, not errno's.
vsched_run --config "$S/p.ini" >/dev/null 2>&1 || fail "the build before the forged directory record"
mkdir -p "$O/adir"
sqlite3 "$S/state/state.db" "INSERT INTO artifacts SELECT 'gone3.c', profile, key, config, tool, deps, '$O/adir', out_mtime_ns, out_ctime_ns, out_size, out_ino, out_hash, duration_ns FROM artifacts LIMIT 1;" ||
    fail "cannot forge a record (sqlite3 is needed)"
vsched_run --config "$S/p.ini" --clean >"$S/o5b" 2>&1
rc=$?
cat "$S/o5b"
check "--clean with a record naming a directory (exit 0)" test $rc -eq 0
check "... keeps the directory, saying it is no output" sh -c \
    "test -d '$O/adir' && grep -q '^vsched-run: kept $O/adir: it is a directory, not an output$' '$S/o5b'"
rmdir "$O/adir"

# --clean with a note for an output a record vouches for (a run killed
# after recording, before emptying the journal): it goes as a recorded
# output, not as an unrecorded one, and one output is "1 output".
rm -f "$S/src/"*.c
printf 'int a(void) { return 1; }\n' >"$S/src/a.c"
vsched_run --config "$S/p.ini" >/dev/null 2>&1 || fail "the build before the vouched note"
note "$O/a.c.o" >"$S/state/published"
vsched_run --config "$S/p.ini" --clean >"$S/o5c" 2>&1
rc=$?
check "--clean with a vouched note (exit 0)" test $rc -eq 0
check "... does not call the recorded output unrecorded" \
    sh -c "! grep -q 'did not record it' '$S/o5c' && test ! -e '$O/a.c.o'"
check "... and counts one output as one" \
    grep -q "^vsched-run: removed 1 output and the state in $S/state$" "$S/o5c"

# The journal is the state directory's own file: a symbolic link put in
# its place is neither followed nor emptied; the run says what to do.
printf 'data of some other file\n' >"$S/victim"
rm -f "$S/state/published"
ln -s "$S/victim" "$S/state/published"
printf 'int r(void) { return 7; }\n' >"$S/src/r.c"
vsched_run --config "$S/p.ini" >"$S/o6" 2>&1
rc=$?
cat "$S/o6"
check "a symbolic link at STATE_DIR/published: exit 2" test $rc -eq 2
check "the file it points to is untouched" \
    grep -qx 'data of some other file' "$S/victim"
check "the message names the journal and what to do" \
    grep -q "published is not a regular file.*remove it" "$S/o6"
rm -f "$S/state/published"
# Nor a second name of a user's file (a tree copied with cp -al): it is
# not emptied, and nothing is appended to it.
printf 'the user keeps notes here\n' >"$S/notes"
ln "$S/notes" "$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o6b" 2>&1
rc=$?
check "a hard link at STATE_DIR/published: exit 2" test $rc -eq 2
check "the file it links to is untouched" \
    grep -qx 'the user keeps notes here' "$S/notes"
check "the message says it is not the journal's own file" \
    grep -q "published is not a regular file of its own.*remove it" "$S/o6b"
rm -f "$S/state/published"
# A FIFO or a directory there: the same one message, on stderr, once.
for kind in fifo dir; do
    if [ $kind = fifo ]; then mkfifo "$S/state/published"; else mkdir "$S/state/published"; fi
    vsched_run --config "$S/p.ini" -q >"$S/o6c" 2>"$S/o6c.err"
    rc=$?
    check "a $kind at STATE_DIR/published: exit 2" test $rc -eq 2
    check "... with nothing on stdout under -q" test ! -s "$S/o6c"
    check "... and one line on stderr saying what to do" \
        sh -c "test \$(wc -l <'$S/o6c.err') -eq 1 && grep -q 'published is not a regular file.*remove it' '$S/o6c.err'"
    rm -rf "$S/state/published"
done
# --clean too refuses a journal that is not its own file, removing nothing.
mkfifo "$S/state/published"
vsched_run --config "$S/p.ini" --clean >"$S/o6d" 2>&1
rc=$?
check "--clean with a FIFO at STATE_DIR/published: exit 2" test $rc -eq 2
check "... saying what to do" grep -q "published is not a regular file.*remove it" "$S/o6d"
check "... and removing nothing" test -e "$S/state/state.db"
rm -f "$S/state/published"
vsched_run --config "$S/p.ini" >"$S/o7" 2>&1
check "with the link removed, the run builds (exit 0)" test $? -eq 0
finish
