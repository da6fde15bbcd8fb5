#!/bin/sh
# Crash safety: a build killed with SIGKILL early (first compiles in
# flight), midway (some objects rebuilt over stale ones, some not), and
# during the link; after each, the next run's outputs equal a clean
# build's byte for byte (so no stale output was taken as up to date, and
# no partial one was published), and the run after that has nothing to
# do (the state is consistent).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
mktree "$S" --seed 31 --files 16 --headers 6 --dirs 2 --funcs 3 ||
    { echo "cannot generate the tree"; exit 1; }
# The compiler: cc after a pause read from $S/delay (compiles) or
# $S/link-delay (links); it notes "compiling"/"linking" and its pid, so the
# test knows when to kill and can wait for the compilers a killed run
# leaves behind (they run in process groups of their own).
mkdir -p "$S/pids"
cat >"$S/delaycc" <<EOF
#!/bin/sh
if [ "\$1" = --version ]; then echo "delaycc 1"; exit 0; fi
: >"$S/pids/\$\$"
case " \$* " in
*" -c "*) : >"$S/compiling"; sleep "\$(cat "$S/delay")" ;;
*) : >"$S/linking"; sleep "\$(cat "$S/link-delay")" ;;
esac
exec cc "\$@"
EOF
chmod +x "$S/delaycc"
echo 0 >"$S/delay"
echo 0 >"$S/link-delay"
sed -i "s|^plugin = cc\$|plugin = cc\ncompiler = $S/delaycc|" "$S/b.ini"

# The final tree T1 and a stale one T0 (two headers differ).
cp -R "$S/tree" "$S/t1"
edit_code "$S/tree/include/l1/h002.h"
edit_code "$S/tree/include/l2/h004.h"
cp -R "$S/tree" "$S/t0"
use_tree() { # T: make the tree that one, every file rewritten
    rm -rf "$S/tree"
    cp -R "$S/$1" "$S/tree"
}
# The files whose outputs the edits change (for the "midway" checks).
stale=$({ includers "$S" include/l1/h002.h; includers "$S" include/l2/h004.h; } | sort -u)

# The reference: a clean build of T1.
use_tree t1
build "$S" ref
check "the clean build of the final tree exits 0" test $? -eq 0
mkdir "$S/ref"
cp -R "$S/out/." "$S/ref/"

# outputs_list DIR: every published output under DIR, relative, sorted.
outputs_list() {
    (cd "$1" && find . -type f ! -name '*.tmp.*' | sort)
}
# same_as_clean NAME: the outputs equal the clean build's, byte for byte.
same_as_clean() {
    if [ "$(outputs_list "$S/ref")" != "$(outputs_list "$S/out")" ]; then
        fail "$1: the same outputs as a clean build"
        echo "  clean: $(outputs_list "$S/ref" | tr '\n' ' ')"
        echo "  here:  $(outputs_list "$S/out" | tr '\n' ' ')"
        return
    fi
    bad=""
    for f in $(outputs_list "$S/ref"); do
        cmp -s "$S/ref/$f" "$S/out/$f" || bad="$bad $f"
    done
    if [ -z "$bad" ]; then
        pass "$1: outputs equal a clean build's, byte for byte"
    else
        fail "$1: outputs equal a clean build's, byte for byte (differ:$bad)"
    fi
}
# reap: wait (bounded) for every compiler a killed run left running.
reap() {
    for p in "$S"/pids/*; do
        [ -e "$p" ] || continue
        i=0
        while kill -0 "${p##*/}" 2>/dev/null && [ $i -lt 500 ]; do
            sleep 0.02
            i=$((i + 1))
        done
        rm -f "$p"
    done
}
# kill_when MARKER SECONDS NAME: start the build, wait for MARKER, wait
# SECONDS more, SIGKILL it, reap what it left running.
kill_when() {
    rm -f "$S/compiling" "$S/linking"
    start_bg "$S" "$3"
    wait_for "$S/$1"
    check "$3: the build reached the kill point" test -e "$S/$1"
    sleep "$2"
    kill -KILL "$VPID"
    wait "$BG" 2>/dev/null
    check "$3: it was killed (no exit of its own)" test $? -eq 137
    reap
}
# rerun NAME: the run after the kill, then a no-op.
rerun() {
    echo 0 >"$S/delay"
    echo 0 >"$S/link-delay"
    build "$S" "$1-rerun"
    check "$1: the run after the kill exits 0" test $? -eq 0
    same_as_clean "$1"
    build "$S" "$1-again"
    check "$1: then nothing to do" grep -qx "vsched-run: nothing to do" "$S/$1-again.out"
}

# ---- early: from nothing, the first compiles in flight -------------------------
rm -rf "$S/out" "$S/state"
echo 0.3 >"$S/delay"
kill_when compiling 0.1 early
rerun early

# ---- midway, over stale outputs: some rebuilt, some not yet -----------------------
for when in 0.35 0.8; do
    kname="mid-$when"
    rm -rf "$S/out" "$S/state"
    use_tree t0
    build "$S" "$kname-stale"
    use_tree t1
    echo 0.25 >"$S/delay"
    kill_when compiling "$when" "$kname"
    rerun "$kname"
    extra=$(rebuilt "$S/$kname-rerun.json" | grep -vxF "$stale")
    check "$kname: the run after the kill rebuilt only files the edit touched" \
        test -z "$extra"
done

# ---- during the link ----------------------------------------------------------------
rm -rf "$S/out" "$S/state"
use_tree t0
build "$S" link-stale
cp "$S/out/release/prog" "$S/prog-t0"
use_tree t1
echo 0 >"$S/delay"
echo 1.5 >"$S/link-delay"
kill_when linking 0.2 link
check "link: the killed link published nothing (the old program, whole)" \
    cmp -s "$S/prog-t0" "$S/out/release/prog"
check "link: ... and the old program is not the new one" \
    sh -c "! cmp -s '$S/ref/release/prog' '$S/out/release/prog'"
rerun link
check "link: the run after the kill relinked" \
    test "$(jq '.jobs[0].rebuilt' "$S/link-rerun.json")" = true

# ---- --clean also removes what killed runs left behind -------------------------------
vsched_run --config "$S/b.ini" --clean >"$S/clean.out" 2>&1
check "--clean after the kills exits 0" test $? -eq 0
check "--clean leaves no output and no temporary" test -z "$(find "$S/out" -type f)"
finish
