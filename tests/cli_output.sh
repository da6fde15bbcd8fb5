#!/bin/sh
# What a build prints when it is not on a terminal: one plain line per
# finished artifact (names escaped), warnings of successful compiles
# shown and counted (-q hides them), the failure summary and -k N as
# ninja's -k, and SIGINT: once (what finished recorded, the summary says
# what was not built, exit 130) and twice (exit 130 at once).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
mktree "$S" --seed 4 --files 6 --headers 4 --dirs 2 --funcs 1 ||
    { echo "cannot generate the tree"; exit 1; }
nsrc=$(wc -l <"$S/tree/sources.txt")
sed -i 's/^cflags = -O1$/cflags = -O1 -Wall/' "$S/b.ini"

# ---- plain lines, escaped names ---------------------------------------------------------
nl='
'
printf 'int odd_name_fn(void) { return 1; }\n' >"$S/tree/src/d0/new${nl}line.c"
build "$S" plain -j 2
check "the build exits 0" test $? -eq 0
total=$((nsrc + 1))
check "one plain line per finished artifact, [done/total] artifact PROFILE NAME" \
    test "$(grep -cE "^\[[0-9]+/$total\] artifact release src/d[01]/" "$S/plain.out")" -eq "$total"
check "... counting 1 to $total" \
    test "$(grep -oE "^\[[0-9]+/$total\]" "$S/plain.out" | tr -d '[]' | cut -d/ -f1 | sort -n | tr '\n' ' ')" = "$(seq 1 $total | tr '\n' ' ')"
check "a newline in a name prints as backslash-n: one line, no forged one" \
    grep -qxF "[$(grep -F 'new\nline.c' "$S/plain.out" | cut -d] -f1 | tr -d '[')] artifact release src/d0/new\\nline.c" "$S/plain.out"
check "no escape sequences off a terminal" sh -c "! grep -q \"$(printf '\033')\" '$S/plain.out'"
rm -f "$S/tree/src/d0/new${nl}line.c"

# ---- warnings ---------------------------------------------------------------------------
printf 'int warns(void) { int unused_var_xyz; return 0; }\n' >"$S/tree/src/d0/warn.c"
build "$S" warn
check "a warning does not fail the build" test $? -eq 0
check "the warning is shown, tagged with the file, profile and plugin" \
    grep -qx "WARNING: src/d0/warn.c \[release\] (cc)" "$S/warn.out"
check "... with the compiler's own text" grep -q "warn.c:1:.*unused_var_xyz" "$S/warn.out"
check "... and counted in the summary" grep -q "^vsched-run: 1 built, 0 failed, $nsrc up to date, 1 warning (" "$S/warn.out"
printf '/* again */\n' >>"$S/tree/src/d0/warn.c"
build "$S" warn-q -q
check "-q: exit 0, no warning printed" \
    sh -c "test $? -eq 0 && ! grep -q -e WARNING -e unused_var_xyz '$S/warn-q.out'"
rm "$S/tree/src/d0/warn.c"

# ---- the failure summary ---------------------------------------------------------------------
printf 'int broken_one(void) { return undeclared_aaa; }\n' >"$S/tree/src/d0/a_bad1.c"
printf 'int broken_two(void) { return undeclared_bbb + ; }\n' >"$S/tree/src/d1/a_bad2.c"
build "$S" fail -k 0
check "two broken files with -k 0: exit 1" test $? -eq 1
check "each failure printed whole first" \
    sh -c "grep -q '^FAILED: src/d0/a_bad1.c \[release\] (artifact)' '$S/fail.out' &&
           grep -q '^FAILED: src/d1/a_bad2.c \[release\] (artifact)' '$S/fail.out'"
check "the summary names each failed file with its first error line" \
    sh -c "grep -q '^vsched-run: failed: src/d0/a_bad1.c \[release\]: .*a_bad1.c:1:[0-9]*: error: .*undeclared_aaa' '$S/fail.out' &&
           grep -q '^vsched-run: failed: src/d1/a_bad2.c \[release\]: .*a_bad2.c:1:[0-9]*: error: ' '$S/fail.out'"
check "... then N failed, M not run because a dependency failed (the link)" \
    grep -qx "vsched-run: 2 failed, 1 not run because a dependency failed" "$S/fail.out"
check "... in that order, before the closing line" \
    test "$(grep -n '^vsched-run: ' "$S/fail.out" | tail -4 | cut -d: -f3- | cut -c2-12 | tr '\n' '|')" = "failed: src|failed: src|2 failed, 1|0 built, 2 |"
check "the closing line counts the failures" \
    grep -q "^vsched-run: 0 built, 2 failed, 1 not built, $nsrc up to date (" "$S/fail.out"
check "-k 0 built everything else" test "$(jq '[.files[] | select(.status == "ok")] | length' "$S/fail.json")" -eq "$nsrc"

# -k 1 (the default) stops after the first failure: on one thread, the
# broken files first in input order, the first fails, the compile already
# taken (if any) finishes, the rest is not built.
rm -rf "$S/out" "$S/state"
build "$S" k1 -j 1
check "-k 1 (default): exit 1" test $? -eq 1
nf=$(jq '[.files[] | select(.status == "failed")] | length' "$S/k1.json")
ns=$(jq '[.files[] | select(.status == "skipped")] | length' "$S/k1.json")
check "... stops after the first failure ($nf failed, $ns skipped)" \
    sh -c "test $nf -ge 1 && test $ns -ge $((nsrc - 1))"
check "... the summary says it stopped, and what it did not build" \
    grep -q "^vsched-run: stopped after 1 failure (-k 1): $ns not built (" "$S/k1.out"
build "$S" k2 -j 1 -k 2
check "-k 2: both broken files fail" \
    test "$(jq '[.files[] | select(.status == "failed")] | length' "$S/k2.json")" -eq 2
check "... and the summary says 2 failed" grep -q "^vsched-run: 2 failed, " "$S/k2.out"
rm "$S/tree/src/d0/a_bad1.c" "$S/tree/src/d1/a_bad2.c"

# ---- SIGINT once: recorded, summarised, 130 ------------------------------------------------------
slow_cc "$S" 0.4
sed -i "s|^plugin = cc\$|plugin = cc\ncompiler = $S/slowcc|" "$S/b.ini"
rm -rf "$S/out" "$S/state" "$S/compiling"
start_bg "$S" int -j 1
wait_for "$S/compiling"
# At least one compile finished (its object published), one running: on
# a loaded machine a fixed sleep may end before the first is done.
i=0
while ! find "$S/out" -name '*.o' 2>/dev/null | grep -q . && [ $i -lt 1000 ]; do
    sleep 0.02
    i=$((i + 1))
done
sleep 0.1
kill -INT "$VPID"
wait "$BG"
check "SIGINT: exit 130" test $? -eq 130
done_n=$(jq '[.files[] | select(.status == "ok")] | length' "$S/int.json")
left=$((nsrc - done_n))
check "... some finished ($done_n), some not" sh -c "test $done_n -ge 1 && test $left -ge 1"
check "... the summary says it was interrupted and what was not built (and the link)" \
    grep -q "^vsched-run: interrupted: $((left + 1)) not built (src/d[01]/f[0-9]*\.c.*); what finished is recorded$" "$S/int.out"
check "... the interrupted link is not called a dependency failure" \
    sh -c "! grep -q 'not run because a dependency failed' '$S/int.out'"
build "$S" after-int
check "... what finished was recorded: the next run builds only the rest" \
    test "$(rebuilt "$S/after-int.json" | wc -l)" -eq "$left"

# ---- SIGINT twice: at once ------------------------------------------------------------------------
# A compiler that survives SIGTERM (it notes it in $S/termed and goes on):
# after the first SIGINT the run waits up to a second for it, then
# SIGKILLs it, before its summary. Once the compiler has heard the
# cancel, a second SIGINT ends the run there and then, without one.
printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "slowcc 1"; exit 0; fi\necho $$ >"%s/ccpid"\ntrap ": >%s/termed" TERM\n: >"%s/compiling"\nwhile :; do sleep 0.05; done\n' \
    "$S" "$S" "$S" >"$S/slowcc"
# The second SIGINT must come within that second: it does when the
# compiler is still alive (not a zombie) when it is sent (the second
# SIGINT itself SIGKILLs it). On a machine too loaded for that, the
# attempt says nothing and is repeated.
edit_comment "$S/tree/include/all.h"
attempt=0
while :; do
    attempt=$((attempt + 1))
    rm -f "$S/compiling" "$S/termed" "$S/ccpid"
    # Under TSan, _exit waits atexit_sleep_ms (1 s) while the other threads
    # run on and would print the summary: "at once" needs that off.
    TSAN_OPTIONS="${TSAN_OPTIONS:-} atexit_sleep_ms=0" start_bg "$S" int2 -j 1
    wait_for "$S/compiling"
    kill -INT "$VPID"
    wait_for "$S/termed"
    in_time=no
    ps -o stat= -p "$(cat "$S/ccpid" 2>/dev/null || echo 0)" 2>/dev/null | grep -qv Z && in_time=yes
    kill -INT "$VPID"
    wait "$BG"
    rc2=$?
    # The compile it left behind is ours: end its process group.
    kill -KILL -"$(cat "$S/ccpid" 2>/dev/null || echo 0)" 2>/dev/null
    [ $in_time = yes ] || [ $attempt -ge 5 ] && break
    echo "(attempt $attempt: the second SIGINT came after the compiler was gone; again)"
done
check "the first SIGINT reached the running compile (SIGTERM)" test -e "$S/termed"
check "the second SIGINT came while the compiler still ran (in $attempt attempts)" \
    test $in_time = yes
check "a second SIGINT: exit 130" test $rc2 -eq 130
check "... at once: no summary printed" sh -c "! grep -q ' built, ' '$S/int2.out'"
slow_cc "$S" 0
build "$S" after-int2
check "... and the state is consistent: the next run exits 0" test $? -eq 0

# ---- a failure's reason names the file: escaped there too -------------------------------
# A link out of the root, named with ESC and a newline, matched by the
# inputs' pattern: the refusal names it, and no byte of it may drive the
# terminal.
printf 'int o;\n' >"$S/outside.c"
E=$(printf '\033')
odd="src/d0/ev${E}[2J${nl}x.c"
ln -s "$S/outside.c" "$S/tree/$odd"
build "$S" oddfail
check "a source linking out of the root is refused (exit 2)" test $? -eq 2
check "... its reason printed without a raw ESC byte" \
    sh -c "! grep -q '$E' '$S/oddfail.out'"
check "... the name escaped in the reason" grep -q 'ev\\e\[2J\\nx\.c is a symbolic link to .*outside the loader root' "$S/oddfail.out"
rm -f "$S/tree/$odd"
# ---- -n: an output to remove is named escaped too ----------------------------------------
gone="src/d0/gone${E}[2J.c"
printf 'int gone;\n' >"$S/tree/$gone"
build "$S" withgone
check "a source named with ESC builds (exit 0)" test $? -eq 0
rm -f "$S/tree/$gone"
build "$S" gone-n -n
check "-n after it left the inputs (exit 0)" test $? -eq 0
check "... lists its object to remove, escaped" grep -q '^remove .*/gone\\e\[2J\.c\.o$' "$S/gone-n.out"
check "... with no raw ESC byte" sh -c "! grep -q '$E' '$S/gone-n.out'"
finish
