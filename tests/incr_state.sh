#!/bin/sh
# The state database under stress: corrupt, truncated, foreign and newer
# state.db files; two vsched-run on one state_dir at once (--no-wait
# refuses, otherwise the second waits); SIGINT mid-build; and a plugin
# built for ABI 1.0 keyed by name, version and configuration.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
command -v sqlite3 >/dev/null 2>&1 || {
    echo "SKIP: sqlite3 is not installed (tools/setup installs it)"
    exit 77
}
scratch
S=$SCRATCH
mktree "$S" --seed 5 --files 12 --headers 6 --dirs 2 --funcs 2 ||
    { echo "cannot generate the tree"; exit 1; }
all=$(sort "$S/tree/sources.txt")
db="$S/state/state.db"
# The compiler: cc after a pause read from $S/delay (0 unless a test needs
# a run to last), and not before $S/hold is gone (a run that must hold
# the state until the test lets it go, however slow the machine), so its
# bytes and identity never change.
printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "delaycc 1"; exit 0; fi\n: >"%s/compiling"\nwhile [ -e "%s/hold" ]; do sleep 0.05; done\nsleep "$(cat "%s/delay")"\nexec cc "$@"\n' \
    "$S" "$S" "$S" >"$S/delaycc"
chmod +x "$S/delaycc"
echo 0 >"$S/delay"
sed -i "s|^plugin = cc\$|plugin = cc\ncompiler = $S/delaycc|" "$S/b.ini"
build "$S" cold
check "cold build exits 0" test $? -eq 0

# bad_state NAME WHY: build over the damaged state.db: a message naming the
# file and WHY, moved aside, a cold build that restores from the cache
# (nothing else lost), then a no-op.
bad_state() {
    build "$S" "$1"
    rc=$?
    check "$1: the build exits 0" test $rc -eq 0
    check "$1: the message names the file, what is wrong and what happens" \
        grep -q "^vsched-run: $db cannot be used (.*$2.*); moved it to $db.corrupt and building from scratch$" "$S/$1.out"
    check "$1: the database was moved aside" test -s "$db.corrupt"
    same_list "$1: a cold build of every file" "$all" "$(rebuilt "$S/$1.json")"
    check "$1: nothing else was lost (every object from the cache)" \
        test "$(stat_of "$S/$1.json" compiled)" -eq 0
    build "$S" "$1-again"
    same_list "$1: then nothing to do" "" "$(rebuilt "$S/$1-again.json")"
    rm -f "$db.corrupt" "$db.corrupt-wal"
}
size=$(wc -c <"$db")
check "the state holds several pages (${size} bytes)" test "$size" -gt 8192
head -c $((size / 2)) "$db" >"$S/half" && mv "$S/half" "$db"
bad_state truncated "malformed"
# Whole pages of garbage inside a database of the right size: found while
# the rows are read, whose rollback must not hide SQLite's reason.
size=$(wc -c <"$db")
yes 'garbage page ' | head -c 8192 | dd of="$db" bs=4096 seek=1 conv=notrunc 2>/dev/null
check "the garbage pages left the size alone" test "$(wc -c <"$db")" -eq "$size"
bad_state garbage_pages "malformed"
check "... never saying that was not an error" \
    test "$(grep -c 'not an error' "$S/garbage_pages.out")" -eq 0
printf 'not a database at all, just some text that is long enough to read\n' >"$db"
bad_state garbage "not a database"
rm -f "$db" "$db-wal" "$db-shm"
sqlite3 "$db" "CREATE TABLE notes(x); INSERT INTO notes VALUES('mine');"
bad_state foreign "not a vsched state database"

sqlite3 "$db" "PRAGMA user_version = 7"
build "$S" newer
check "a newer schema exits 2" test $? -eq 2
check "... naming the file and both versions" \
    grep -q "^vsched-run: $db has state schema version 7, newer than this vsched-run's 1: use a newer vsched-run, or remove $db" "$S/newer.out"
check "... and it is left alone" test ! -e "$db.corrupt"
sqlite3 "$db" "PRAGMA user_version = 1"
build "$S" repaired
same_list "the same file with our version works again" "" "$(rebuilt "$S/repaired.json")"
check "the schema version is PRAGMA user_version" \
    test "$(sqlite3 "$db" 'PRAGMA user_version')" = 1
check "in WAL mode" test "$(sqlite3 "$db" 'PRAGMA journal_mode')" = wal

# ---- two runs at once ---------------------------------------------------------------
echo 0.4 >"$S/delay"
edit_code "$S/tree/include/l1/h000.h"
want=$(includers "$S" include/l1/h000.h)
rm -f "$S/compiling"
# The first run holds the state until every check of another run that
# needs it held is done: under a loaded sanitizer run, those took longer
# than the first run's compiles, which then let the fourth run in.
: >"$S/hold"
start_bg "$S" first
first_bg=$BG
wait_for "$S/compiling"
check "the first run is compiling" test -e "$S/compiling"
build "$S" nowait --no-wait
check "a second run with --no-wait exits 2" test $? -eq 2
check "... saying which directory is in use, by whom, and what to do" \
    grep -q "^vsched-run: $S/state is in use by another vsched-run (pid $VPID) and --no-wait was given: let that run finish or run again without --no-wait$" "$S/nowait.out"
# The state is read while the inputs are expanded; a run whose inputs are
# wrong still says so at once, and never waits for the lock.
build "$S" badinputs --set 'batch.inputs=no/such/*.c'
check "while another run holds the state, wrong inputs exit 2" test $? -eq 2
check "... naming the pattern" grep -q "no/such/\*\.c" "$S/badinputs.out"
check "... without waiting for the lock" \
    test "$(grep -c "waiting for" "$S/badinputs.out")" -eq 0
# So does a wrong FILE operand (operands.h): each is checked before the
# state is waited for.
for op in no/such.c ../x.c include ''; do
    build "$S" badop --no-wait "$op"
    rc=$?
    check "while another run holds the state, operand '$op' exits 2" test $rc -eq 2
    check "... saying what is wrong with it, not that the state is in use" \
        grep -Eq "^vsched-run: ('no/such.c' is no target|'\.\./x\.c' is outside|'include' is a directory|an empty FILE operand)" "$S/badop.out"
done
check "... while the first run still holds it" kill -0 "$VPID"
start_bg "$S" second
second_bg=$BG
i=0
while ! grep -q "waiting for" "$S/second.out" && [ $i -lt 500 ]; do
    sleep 0.02
    i=$((i + 1))
done
check "a second run without --no-wait says it waits" \
    grep -q "^vsched-run: waiting for $S/state: another vsched-run (pid [0-9]*) is using it$" "$S/second.out"
# -q prints failures and the summary, nothing else: a third run waits
# without saying so. It is known to wait once /proc/locks shows two
# waiters on the lock file (the second run and it).
start_bg "$S" third -q
third_bg=$BG
lock_ino=$(stat -c %i "$S/state/lock")
i=0
while [ "$(grep -c -- "-> .*:$lock_ino " /proc/locks)" -lt 2 ] && [ $i -lt 500 ]; do
    sleep 0.02
    i=$((i + 1))
done
check "a third run with -q waits for the lock too" \
    test "$(grep -c -- "-> .*:$lock_ino " /proc/locks)" -eq 2
# SIGINT while waiting: nothing was built, exit 130, and the run says so
# (not a bare ^C).
start_bg "$S" fourth
fourth_bg=$BG
i=0
while ! grep -q "waiting for" "$S/fourth.out" && [ $i -lt 500 ]; do
    sleep 0.02
    i=$((i + 1))
done
kill -INT "$VPID"
wait "$fourth_bg"
check "SIGINT while waiting for the lock: exit 130" test $? -eq 130
check "... saying nothing was built" \
    grep -q "^vsched-run: interrupted before anything was built$" "$S/fourth.out"
rm -f "$S/hold"
wait "$first_bg"
check "the first run finishes (exit 0)" test $? -eq 0
wait "$second_bg"
check "the second run then finishes (exit 0)" test $? -eq 0
wait "$third_bg"
check "the third run (-q) then finishes (exit 0)" test $? -eq 0
check "... and never said it waited" \
    test "$(grep -c "waiting for" "$S/third.out")" -eq 0
same_list "the first run built the edit" "$want" "$(rebuilt "$S/first.json")"
same_list "the second run, after it, had nothing to do" "" "$(rebuilt "$S/second.json")"

# ---- SIGINT cancels, keeps what finished, exits 130 ----------------------------------
edit_comment "$S/tree/include/all.h" # every file includes it
rm -f "$S/compiling"
start_bg "$S" int -j 1
wait_for "$S/compiling"
sleep 0.5 # one compile done, one running
kill -INT "$VPID"
wait "$BG"
check "SIGINT: exit 130" test $? -eq 130
check "SIGINT: the report says cancelled" \
    test "$(jq '[.files[] | select(.status == "cancelled")] | length' "$S/int.json")" -gt 0
done_before=$(rebuilt "$S/int.json")
echo 0 >"$S/delay"
build "$S" after-int
check "the run after it exits 0" test $? -eq 0
same_list "... and rebuilds exactly what the interrupted run did not" \
    "$(echo "$all" | grep -vxF "$done_before")" "$(rebuilt "$S/after-int.json")"

# ---- a plugin built for ABI 1.0 (no identity, no deps): name, version, config ---------
V="$S/v10"
mkdir -p "$V/tree"
printf 'blocker common.txt\nhello\n' >"$V/tree/a.txt"
printf 'blocker common.txt\nworld\n' >"$V/tree/b.txt"
printf 'shared\n' >"$V/tree/common.txt"
find "$V/tree" -type f -exec touch -d '-1 minute' {} +
cat >"$V/b.ini" <<EOF
[vsched]
state_dir = state
[loader]
plugin = fs
root = tree
[executor]
plugin = $top_builddir/tests/abi/v1_0_plugin
out_dir = out
[batch]
inputs = a.txt b.txt
EOF
build "$V" v1
same_list "the 1.0 plugin builds" "a.txt
b.txt" "$(rebuilt "$V/v1.json")"
build "$V" v2
check "then has nothing to do" grep -qx "vsched-run: nothing to do" "$V/v2.out"
printf 'changed\n' >"$V/tree/common.txt"
build "$V" v3
same_list "its blocker's edit rebuilds both" "a.txt
b.txt" "$(rebuilt "$V/v3.json")"
printf 'hello again\n' >"$V/tree/a.txt"
build "$V" v4
same_list "an edit of one input rebuilds that one" "a.txt" "$(rebuilt "$V/v4.json")"
build "$V" v5 --set "executor.out_dir=$V/other"
check "its configuration is in the key: a new out_dir rebuilds both, 'flags changed'" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .reason] | join(",")' "$V/v5.json")" = "flags changed,flags changed"
finish
