#!/bin/sh
# -n against the run it predicts. Two invariants, checked in every state
# below (a clean build, forged records, a forged journal, a journal that
# is not the state directory's own file):
#  - -n writes nothing: every file under the scratch directory (state
#    directory, outputs, sources) has the same name, size, inode and
#    mtime after it as before;
#  - what -n lists as "remove PATH" is exactly what the real run that
#    follows says it "removed", no more and no fewer, each path once; and
#    a state the real run refuses (exit 2), -n refuses the same way.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
mkdir -p "$S/src"
cc_ini "$S/p.ini"
printf 'int a(void) { return 1; }\n' >"$S/src/a.c"
printf 'int b(void) { return 2; }\n' >"$S/src/b.c"
O="$S/out/release"
L="$S/log" # what the test itself writes: not part of the tree
mkdir "$L"

# tree: one line per file under the scratch directory.
tree() { find "$S" -path "$L" -prune -o -printf '%P %y %s %i %T@\n' | sort; }
# dry NAME: run -n, check that it wrote nothing; its stdout in $S/NAME.n,
# its status in $drc.
dry() {
    tree >"$L/tree.before"
    vsched_run --config "$S/p.ini" -n >"$L/$1.n" 2>"$L/$1.nerr"
    drc=$?
    tree >"$L/tree.after"
    check "$1: -n writes nothing" cmp -s "$L/tree.before" "$L/tree.after"
    diff "$L/tree.before" "$L/tree.after" | sed 's/^/    /'
}
# real NAME: the run itself; stdout in $S/NAME.r, status in $rrc.
real() {
    vsched_run --config "$S/p.ini" >"$L/$1.r" 2>"$L/$1.rerr"
    rrc=$?
}
# same_removals NAME: -n's "remove P" lines against the run's "removed P
# (why)" (no path here holds " (").
same_removals() {
    sed -n 's/^remove \(.*\)$/\1/p' "$L/$1.n" | sed 's/ (.*)$//' >"$L/$1.nrm"
    sed -n 's/^vsched-run: removed \(.*\)$/\1/p' "$L/$1.r" |
        sed 's/ (.*)$//' >"$L/$1.rrm"
    check "$1: -n lists what the run removes, each once" \
        cmp -s "$L/$1.nrm" "$L/$1.rrm"
    diff "$L/$1.nrm" "$L/$1.rrm" | sed 's/^/    /'
}

# A state directory that does not exist yet: -n creates none.
dry fresh
check "fresh: -n exits 0 and plans both files" sh -c \
    "test $drc -eq 0 && test \$(grep -c '^artifact release' '$L/fresh.n') -eq 2"
check "fresh: and makes no state directory" test ! -e "$S/state"
real fresh
check "the first run builds (exit 0)" test "$rrc" -eq 0

# Up to date: the state database is read, not opened for writing (no
# -wal or -shm beside it).
dry uptodate
check "uptodate: -n says nothing to do" grep -qx 'vsched-run: nothing to do' "$L/uptodate.n"

# Records the real run keeps (forged: sources that left, naming what is
# no output), and one it removes (b.c, which really left).
if command -v sqlite3 >/dev/null 2>&1; then
    mkdir -p "$O/adir"
    printf 'precious\n' >"$S/precious"
    n=0
    # ... and two naming the output of a.c, which stays an input
    for p in "$O/adir" "$S/out" "$S/out/." "" "$S/precious" "$O/missing.o" \
        "$O/../../precious" "$O/a.c.o" "$O/../release/a.c.o"; do
        n=$((n + 1))
        sqlite3 "$S/state/state.db" "INSERT INTO artifacts SELECT 'gone$n.c', profile, key, config, tool, deps, '$p', out_mtime_ns, out_ctime_ns, out_size, out_ino, out_hash, duration_ns FROM artifacts WHERE source = 'a.c';" ||
            fail "cannot forge record $n"
    done
    rm "$S/src/b.c"
    dry forged
    real forged
    check "forged: both runs exit 0" test "$drc" -eq 0 -a "$rrc" -eq 0
    same_removals forged
    check "forged: the output of b.c is listed and removed" \
        grep -qx "$O/b.c.o" "$L/forged.rrm"
    check "forged: the directory, out_dir and the file outside stay" \
        test -d "$O/adir" -a -d "$S/out" -a -e "$S/precious"
    check "forged: the output of a.c, still an input, stays" test -e "$O/a.c.o"
    dry forged-after
    check "forged: the records are gone: then nothing to do" \
        grep -qx 'vsched-run: nothing to do' "$L/forged-after.n"
    check "forged: the run says why it keeps each, in words" sh -c "
        grep -qx 'vsched-run: kept $O/adir: it is a directory, not an output' '$L/forged.rerr' &&
        grep -qx 'vsched-run: kept $S/out: it is \[executor\] out_dir itself' '$L/forged.rerr' &&
        grep -qx 'vsched-run: kept $S/out/.: it is \[executor\] out_dir itself' '$L/forged.rerr' &&
        grep -qx 'vsched-run: kept $S/precious: it is not under \[executor\] out_dir' '$L/forged.rerr' &&
        test \$(wc -l <'$L/forged.rerr') -eq 5"
else
    fail "sqlite3 is not installed (tools/setup installs it)"
fi

# same_builds NAME: -n's "artifact PROFILE NAME: why" lines against the
# run's "[i/n] artifact PROFILE NAME" lines, as sets.
same_builds() {
    sed -n 's/^artifact \([^ ]* [^:]*\):.*$/\1/p' "$L/$1.n" | sort >"$L/$1.nb"
    sed -n 's/^\[[0-9]*\/[0-9]*\] artifact \(.*\)$/\1/p' "$L/$1.r" | sort >"$L/$1.rb"
    check "$1: -n plans what the run builds" cmp -s "$L/$1.nb" "$L/$1.rb"
    diff "$L/$1.nb" "$L/$1.rb" | sed 's/^/    /'
}

# A journal naming an output twice (a run killed after publishing it,
# the note repeated), and a file outside out_dir.
printf 'int s(void) { return 3; }\n' >"$S/src/s.c"
real built_s
rm -f "$S/src/s.c"
sqlite3 "$S/state/state.db" "DELETE FROM artifacts WHERE source = 's.c';" ||
    fail "cannot drop the record of s.c"
note() { printf '%s:%s:%s:%s\0' "$(stat -c %i "$1")" "$(stat -c %s "$1")" \
    "$(stat -c %.9Y "$1" | tr -d .)" "$1"; }
{ note "$O/s.c.o"; note "$O/s.c.o"; note "$S/precious"; } >"$S/state/published"
dry journal
real journal
check "journal: both runs exit 0" test "$drc" -eq 0 -a "$rrc" -eq 0
check "journal: the unrecorded output is removed" test ! -e "$O/s.c.o"
check "journal: the file outside out_dir stays" test -e "$S/precious"
same_removals journal
same_builds journal

# A journal noting a recorded output whose stamp no longer matches its
# record (its mode changed since: a new ctime): settling removes it
# before the run plans, so the run rebuilds it; -n plans that too.
chmod 600 "$O/a.c.o"
note "$O/a.c.o" >"$S/state/published"
dry unvouched
real unvouched
check "unvouched: both runs exit 0" test "$drc" -eq 0 -a "$rrc" -eq 0
same_removals unvouched
check "unvouched: -n lists a.c as missing its output" \
    grep -qx 'artifact release a.c: output missing' "$L/unvouched.n"
same_builds unvouched
check "unvouched: and the run leaves a.c.o built" test -s "$O/a.c.o"

# A note naming a recorded, current output in another spelling: the
# record vouches for the file (known by its stamp), so nothing goes.
note "$S/out/./release/a.c.o" >"$S/state/published"
dry respelt
real respelt
check "respelt: -n has nothing to do" grep -qx 'vsched-run: nothing to do' "$L/respelt.n"
check "respelt: the run removes and rebuilds nothing" sh -c \
    "test $rrc -eq 0 && ! grep -q 'removed\\|artifact' '$L/respelt.r' && test -s '$O/a.c.o'"

# A journal that is not the state directory's own file: the run refuses
# it (exit 2, saying what to do); so does -n, with the same message.
printf 'some other file\n' >"$S/victim"
for kind in fifo symlink hardlink dir; do
    rm -rf "$S/state/published"
    case $kind in
    fifo) mkfifo "$S/state/published" ;;
    symlink) ln -s "$S/victim" "$S/state/published" ;;
    hardlink) ln "$S/victim" "$S/state/published" ;;
    dir) mkdir "$S/state/published" ;;
    esac
    dry "bad-$kind"
    real "bad-$kind"
    check "bad-$kind: the run exits 2" test "$rrc" -eq 2
    check "bad-$kind: -n exits 2 with the run's message" sh -c \
        "test $drc -eq 2 && grep -q 'published is not a regular file.*remove it' '$L/bad-$kind.nerr' && cmp -s '$L/bad-$kind.nerr' '$L/bad-$kind.rerr'"
done
rm -rf "$S/state/published"

# A state file that is no regular file (a FIFO would block a read-only
# open): the run refuses it, and so does -n, with the same message.
for f in state.db state.db-shm; do
    [ $f = state.db ] && mv "$S/state/state.db" "$S/state.db.saved"
    mkfifo "$S/state/$f"
    dry "fifo-$f"
    real "fifo-$f"
    check "fifo-$f: the run exits 2, saying what to do" sh -c \
        "test $rrc -eq 2 && grep -q '$f is not a regular file.*remove it' '$L/fifo-$f.rerr'"
    check "fifo-$f: -n too, with the same message" sh -c \
        "test $drc -eq 2 && cmp -s '$L/fifo-$f.nerr' '$L/fifo-$f.rerr'"
    rm -f "$S/state/$f"
    [ $f = state.db ] && mv "$S/state.db.saved" "$S/state/state.db"
done

# A run killed mid-build: what it recorded is in the database's WAL
# (state.db-wal, with its -shm index), not yet in the database. -n reads
# it there, writing neither file, and plans only what the kill left.
printf '#!/bin/sh\nfor a; do case "$a" in *slow.c) sleep 60;; esac; done\nexec cc "$@"\n' >"$S/slowcc"
chmod +x "$S/slowcc"
sed -i "s|^compiler = .*|compiler = $S/slowcc|" "$S/p.ini"
for i in 1 2 3 4 5 6; do printf 'int k%d(void) { return %d; }\n' $i $i >"$S/src/k$i.c"; done
printf 'int slow(void) { return 0; }\n' >"$S/src/slow.c"
setsid "$top_builddir/vsched-run" --config "$S/p.ini" -j2 >"$L/killed.out" 2>&1 &
pid=$!
i=0 # until the six are recorded (and slow.c compiles), up to 30 s
while [ $i -lt 300 ] && [ "$(sqlite3 "$S/state/state.db" "SELECT count(*) FROM artifacts WHERE source LIKE 'k%'" 2>/dev/null)" != 6 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -9 -$pid 2>/dev/null
wait $pid 2>/dev/null
check "killed: the kill left the WAL and its index" test -s "$S/state/state.db-wal" -a -e "$S/state/state.db-shm"
saved_tmpdir=${TMPDIR-}
mkdir "$L/tmp"
export TMPDIR="$L/tmp" # where -n may copy the database: its own, seen
dry killed
check "killed: -n plans only slow.c (what was recorded is read from the WAL)" sh -c \
    "test $drc -eq 0 && test \"\$(grep '^artifact' '$L/killed.n')\" = 'artifact release slow.c: new'"
check "killed: and leaves no copy of the database behind" \
    test -z "$(ls -A "$L/tmp")"
if [ -n "$saved_tmpdir" ]; then TMPDIR=$saved_tmpdir; else unset TMPDIR; fi
# A state directory whose name holds ESC: every message naming it (the
# corrupt database moved aside, a journal refused, --clean's summary)
# prints it escaped, never the raw byte.
E=$(printf '\033')
cc_ini "$S/e.ini"
sed -i "s|^state_dir = .*|state_dir = st${E}[2Jate|; s|^out_dir = .*|out_dir = eout|" "$S/e.ini"
vsched_run --config "$S/e.ini" >"$L/esc1" 2>&1 || fail "the build with an ESC in state_dir"
printf 'not a database at all, only text long enough to be read\n' >"$S/st${E}[2Jate/state.db"
vsched_run --config "$S/e.ini" >"$L/esc2" 2>&1
rm -f "$S/st${E}[2Jate/published"
mkfifo "$S/st${E}[2Jate/published"
vsched_run --config "$S/e.ini" -n >"$L/esc3" 2>&1
rm -f "$S/st${E}[2Jate/published"
vsched_run --config "$S/e.ini" --clean >"$L/esc4" 2>&1
for k in 2 3 4; do
    check "ESC in state_dir, message $k: named escaped, no raw ESC" sh -c \
        "grep -q 'st\\\\e\\[2Jate' '$L/esc$k' && ! grep -q '$E' '$L/esc$k'"
done
finish
