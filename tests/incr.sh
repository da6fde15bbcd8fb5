#!/bin/sh
# Incremental builds over a generated tree: each change rebuilds exactly
# the files it must, checked against vsched-gen's deps.txt with the
# rebuilt set of --report; no-op, touch, header edit, comment-only edit
# (no relink), flags of one profile, compiler change, deleted and
# modified outputs, a header only the compiler's depfile names, removed
# input, -n, durations ordering the work.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
mktree "$S" --seed 11 --files 24 --headers 8 --dirs 3 --long 2 --funcs 3 ||
    { echo "cannot generate the tree"; exit 1; }
all=$(sort "$S/tree/sources.txt")
n=$(echo "$all" | wc -l)

# ---- cold, then nothing changed ----------------------------------------------
build "$S" cold
check "cold build exits 0" test $? -eq 0
same_list "cold build rebuilds every input" "$all" "$(rebuilt "$S/cold.json")"
check "cold build links" test "$(jq '.jobs[0].rebuilt' "$S/cold.json")" = true
check "the report is version 1 with one row per input" \
    test "$(jq '.version, (.files | length)' "$S/cold.json" | tr '\n' ' ')" = "1 $n "

build "$S" noop --stats
check "no-op exits 0" test $? -eq 0
check "no-op says only 'nothing to do' (and the stats)" \
    test "$(grep -v '^stats:' "$S/noop.out")" = "vsched-run: nothing to do"
same_list "no-op rebuilds nothing" "" "$(rebuilt "$S/noop.json")"
check "no-op reads no source and no output" \
    test "$(stat_of "$S/noop.json" sources_hashed) $(stat_of "$S/noop.json" outputs_hashed)" = "0 0"
check "no-op starts no scheduler (no stage ran)" \
    sh -c "! grep -q '^stats: runs' '$S/noop.out'"
check "no-op does not relink" test "$(jq '.jobs[0].rebuilt' "$S/noop.json")" = false

# ---- touched, content unchanged ----------------------------------------------
hdr=include/l2/h003.h
# (stamps well in the past: a stamp within a tick of its taking is not
# trusted, stamp.h, and would be read again by the next run)
touch -d '-10 seconds' "$S/tree/$hdr" "$S/tree/src/d1/f0001.c"
build "$S" touch
same_list "touching without changing rebuilds nothing" "" "$(rebuilt "$S/touch.json")"
check "the two touched files are read once to hash them" \
    test "$(stat_of "$S/touch.json" sources_hashed)" -eq 2
touch -d '-10 seconds' "$S/tree/$hdr"
build "$S" touch2
build "$S" touch3
check "a touched file's new stamp is recorded: read once, then never" \
    test "$(stat_of "$S/touch2.json" sources_hashed) $(stat_of "$S/touch3.json" sources_hashed)" = "1 0"

# ---- a header edit rebuilds exactly its includers ----------------------------
edit_code "$S/tree/$hdr"
build "$S" hdr --explain
want=$(includers "$S" "$hdr")
check "the edited header has includers" test -n "$want"
same_list "header edit rebuilds exactly the files including it (deps.txt)" \
    "$want" "$(rebuilt "$S/hdr.json")"
same_list "each says which dependency changed" \
    "$(echo "$want" | sed "s|\$|: dependency $hdr changed|")" \
    "$(reasons "$S/hdr.json")"
check "--explain prints one line per rebuilt file" \
    test "$(grep -c '^vsched-run: explain: src/.* \[release\]: dependency include/l2/h003.h changed$' "$S/hdr.out")" -eq "$(echo "$want" | wc -l)"
check "changed objects relink" test "$(jq '.jobs[0].rebuilt' "$S/hdr.json")" = true

# ---- a comment-only edit: the file rebuilds, its object is the same ----------
edit_comment "$S/tree/src/d2/f0002.c"
build "$S" comment --explain
same_list "a source edit rebuilds that file only" "src/d2/f0002.c" \
    "$(rebuilt "$S/comment.json")"
check "... with reason 'source changed'" \
    test "$(jq -r '.files[] | select(.rebuilt) | .reason' "$S/comment.json")" = "source changed"
check "an object identical to the last one does not relink" \
    test "$(jq -r '.jobs[0].rebuilt' "$S/comment.json")" = false
check "... and --explain has no link line" \
    sh -c "! grep -q 'explain: link' '$S/comment.out'"

# ---- the flags of one profile --------------------------------------------------
cat >>"$S/b.ini" <<'EOF'

[profile.debug]
cflags = -O0
EOF
sed -i 's/^link = prog$/link = prog\nprofiles = release debug/' "$S/b.ini"
build "$S" twoprof
check "a new profile builds all its files and nothing of the other" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .profile] | unique | join(",")' "$S/twoprof.json")" = debug
build "$S" flags --set profile.debug.cflags=-O0\ -DVSCHED_TEST=1
same_list "changing one profile's cflags rebuilds that profile only" \
    "$(echo "$all" | sed 's/$/ debug/')" \
    "$(jq -r '.files[] | select(.rebuilt) | "\(.path) \(.profile)"' "$S/flags.json" | sort)"
check "... with reason 'flags changed'" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .reason] | unique | join(",")' "$S/flags.json")" = "flags changed"
build "$S" flags2 --set profile.debug.cflags=-O0\ -DVSCHED_TEST=1
same_list "the same flags again: nothing" "" "$(rebuilt "$S/flags2.json")"
sed -i 's/^profiles = release debug$//' "$S/b.ini"
build "$S" back
check "back to one profile" test "$(jq '.files | length' "$S/back.json")" -eq 24

# ---- the compiler changes ------------------------------------------------------
cc_of() {
    printf '#!/bin/sh\nif [ "$1" = --version ]; then echo "testcc %s"; exit 0; fi\nexec cc "$@"\n' "$1" >"$S/testcc"
    chmod +x "$S/testcc"
}
cc_of 1.0
build "$S" cc1 --set "executor.compiler=$S/testcc"
cc_of 1.0
build "$S" cc1b --set "executor.compiler=$S/testcc"
same_list "the same compiler rewritten with the same bytes: nothing" "" \
    "$(rebuilt "$S/cc1b.json")"
cc_of 2.0
build "$S" cc2 --set "executor.compiler=$S/testcc"
same_list "a compiler that says another version rebuilds everything" "$all" \
    "$(rebuilt "$S/cc2.json")"
check "... with reason 'compiler changed'" \
    test "$(jq -r '[.files[] | .reason] | unique | join(",")' "$S/cc2.json")" = "compiler changed"
build "$S" cc3

# ---- outputs deleted or modified -----------------------------------------------
obj="$S/out/release/src/d0/f0003.c.o"
cp "$obj" "$S/f0003.o.good"
rm "$obj"
build "$S" delout
same_list "a deleted output is rebuilt" "src/d0/f0003.c" "$(rebuilt "$S/delout.json")"
check "... with reason 'output missing'" \
    test "$(jq -r '.files[] | select(.rebuilt) | .reason' "$S/delout.json")" = "output missing"
check "... restored from the cache, byte for byte" \
    sh -c "test '$(cached "$S/delout.json")' = src/d0/f0003.c && cmp -s '$obj' '$S/f0003.o.good'"
rm "$obj"
build "$S" delout2 --set cache.max_size=0
check "with the cache off a deleted output is compiled again" \
    test "$(rebuilt "$S/delout2.json")|$(cached "$S/delout2.json")" = "src/d0/f0003.c|"
printf 'garbage' >>"$obj"
build "$S" modout --explain
same_list "a modified output is rebuilt" "src/d0/f0003.c" "$(rebuilt "$S/modout.json")"
check "... with reason 'output modified', and its bytes are right again" \
    sh -c "test \"\$(jq -r '.files[] | select(.rebuilt) | .reason' '$S/modout.json')\" = 'output modified' && cmp -s '$obj' '$S/f0003.o.good'"
touch "$obj"
build "$S" touchout
same_list "a touched, unchanged output is not rebuilt" "" "$(rebuilt "$S/touchout.json")"

# ---- a header only the compiler's depfile names ---------------------------------
printf '#define VSCHED_HIDDEN 1\n' >"$S/tree/src/d0/hidden.h"
printf '#define HDR "hidden.h"\n#include HDR\nint macro_v(void) { return VSCHED_HIDDEN; }\n' \
    >"$S/tree/src/d0/macro.c"
build "$S" macro1
same_list "a new file is built" "src/d0/macro.c" "$(rebuilt "$S/macro1.json")"
printf '#define VSCHED_HIDDEN 2\n' >"$S/tree/src/d0/hidden.h"
build "$S" macro2
same_list "a header reached through a macro (the scanner cannot see it) still rebuilds its includer" \
    "src/d0/macro.c" "$(rebuilt "$S/macro2.json")"
check "... naming it" \
    test "$(jq -r '.files[] | select(.rebuilt) | .reason' "$S/macro2.json")" = "dependency src/d0/hidden.h changed"

# ---- a file leaves the inputs -----------------------------------------------------
mv "$S/tree/src/d0/macro.c" "$S/macro.c.away"
build "$S" removed
check "the build without it exits 0" test $? -eq 0
check "its output is removed" test ! -e "$S/out/release/src/d0/macro.c.o"
check "and the run says so" \
    grep -q "^vsched-run: removed $S/out/release/src/d0/macro.c.o (src/d0/macro.c \[release\] is no longer an input)$" "$S/removed.out"
check "the report lists it under removed" \
    test "$(jq -r '.removed[0].path' "$S/removed.json")" = src/d0/macro.c
check "the link runs again without it" test "$(jq '.jobs[0].rebuilt' "$S/removed.json")" = true
build "$S" removed2
same_list "then nothing to do" "" "$(rebuilt "$S/removed2.json")"
# An output someone replaced is theirs: when its source leaves, it stays
# (and -n does not list it); one merely touched (same bytes) still goes.
obj="$S/out/release/src/d0/macro.c.o"
mv "$S/macro.c.away" "$S/tree/src/d0/macro.c"
build "$S" back
check "the file back in the inputs builds (exit 0)" test $? -eq 0 -a -s "$obj"
printf 'the user put this here\n' >"$obj"
mv "$S/tree/src/d0/macro.c" "$S/macro.c.away"
vsched_run --config "$S/b.ini" -n >"$S/replaced-n.out" 2>&1
check "-n does not list a replaced output to remove" \
    sh -c "! grep -q '^remove ' '$S/replaced-n.out'"
build "$S" replaced
check "the build without it exits 0" test $? -eq 0
check "... keeps the output the user replaced" grep -qx "the user put this here" "$obj"
check "... saying why" \
    grep -q "^vsched-run: kept $obj: it changed since vsched-run wrote it$" "$S/replaced.out"
rm -f "$obj"
mv "$S/macro.c.away" "$S/tree/src/d0/macro.c"
build "$S" back2
touch -d '2001-01-01' "$obj"
mv "$S/tree/src/d0/macro.c" "$S/macro.c.away"
build "$S" touched
check "an output only touched is still removed when its source leaves" \
    sh -c "test $? -eq 0 && test ! -e '$obj'"

# ---- -n: what would be rebuilt, nothing run or written -----------------------------
edit_code "$S/tree/include/l3/h001.h"
want=$(includers "$S" include/l3/h001.h)
before=$(ls -l --time-style=+%s.%N "$S/state/state.db" "$S/out/release/prog")
vsched_run --config "$S/b.ini" -n >"$S/dry.out" 2>&1
check "-n exits 0" test $? -eq 0
same_list "-n lists exactly the files the edit rebuilds, with the reason" \
    "$(echo "$want" | sed 's|^\(.*\)$|artifact release \1: dependency include/l3/h001.h changed|')" \
    "$(grep '^artifact ' "$S/dry.out" | sort)"
check "-n plans the link" grep -qx "link release prog: input .* changed" "$S/dry.out"
check "-n writes nothing" \
    test "$before" = "$(ls -l --time-style=+%s.%N "$S/state/state.db" "$S/out/release/prog")"
build "$S" afterdry
same_list "the run after -n rebuilds that set" "$want" "$(rebuilt "$S/afterdry.json")"

# ---- recorded durations reach the scheduler: the long files start first ------------
# Ten short files, then two long ones; one CPU thread, so the order in which
# artifacts finish is the order in which they ran.
D="$S/dur"
mkdir -p "$D/tree"
for i in 01 02 03 04 05 06 07 08 09 10; do
    printf 'int f%s(int x) { return x + 1%s; }\n' $i $i >"$D/tree/s$i.c"
done
for i in 11 12; do
    k=1
    while [ $k -le 300 ]; do
        printf 'int g%s_%d(int x) { int a = x; for (int j = 0; j < %d; j++) a = a * 31 + j; return a; }\n' $i $k $k
        k=$((k + 1))
    done >"$D/tree/s$i.c"
done
sed -e 's|^inputs = .*|inputs = *.c|' -e '/^include_dirs/d' -e '/^link/d' \
    "$S/b.ini" >"$D/b.ini"
# rank FILE OUT: where FILE finished among the artifacts of OUT
rank() { grep '^\[' "$2" | awk '{print $4}' | grep -nx "$1" | cut -d: -f1; }
build "$D" d1 -j 1
check "without durations the long files, named last, run late (#$(rank s11.c "$D/d1.out"), #$(rank s12.c "$D/d1.out") of 12)" \
    test "$(rank s11.c "$D/d1.out")" -ge 9 -a "$(rank s12.c "$D/d1.out")" -ge 9
build "$D" d2 -j 1 --set executor.cflags=-O2
# (a short file whose chain was ready before the long ones were even
# loaded may run first: the pool never idles; so "early", not "first")
check "with their durations recorded they run early (#$(rank s11.c "$D/d2.out"), #$(rank s12.c "$D/d2.out") of 12)" \
    test "$(rank s11.c "$D/d2.out")" -le 4 -a "$(rank s12.c "$D/d2.out")" -le 4
finish