#!/bin/sh
# Outputs and include cycles through the real vsched-run and real gcc:
# a.c, a.cc and a.cpp in one directory each get an object of their own
# (the source's extension is kept: a.c.o), none lost; two headers with
# include guards that include each other build (the cycle is one unit),
# and incremental rebuilds through the cycle are exact.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
mkdir -p "$S/src/sub" "$S/src/inc"
cat >"$S/b.ini" <<EOF
[vsched]
state_dir = state
[loader]
plugin = fs
root = src
[executor]
plugin = cc
compiler = cc
include_dirs = inc
out_dir = out
[batch]
inputs = *.c *.cc *.cpp sub/*.c
profiles = release
EOF
printf 'int from_c(void) { return 1; }\n' >"$S/src/a.c"
printf 'extern "C" int from_cc(void) { return 2; }\n' >"$S/src/a.cc"
printf 'extern "C" int from_cpp(void) { return 3; }\n' >"$S/src/a.cpp"

# Two guarded headers including each other (legal, common) and their
# includers.
cat >"$S/src/inc/a.h" <<'EOF'
#ifndef A_H
#define A_H
#include "b.h"
#define A_VALUE 40
#endif
EOF
cat >"$S/src/inc/b.h" <<'EOF'
#ifndef B_H
#define B_H
#include "a.h"
#define B_VALUE 2
#endif
EOF
cat >"$S/src/sub/m.c" <<'EOF'
#include "a.h"
int m(void) { return A_VALUE + B_VALUE; }
EOF
cat >"$S/src/sub/n.c" <<'EOF'
#include "b.h"
int n(void) { return B_VALUE; }
EOF
# ---- one object per source -------------------------------------------------
vsched_run --config "$S/b.ini" >"$S/o1" 2>&1
rc=$?
cat "$S/o1"
check "a.c, a.cc and a.cpp build (exit 0)" test $rc -eq 0
check "5 built" grep -q "5 built" "$S/o1"
for x in c cc cpp; do
    check "a.$x has its own object out/release/a.$x.o" \
        test -s "$S/out/release/a.$x.o"
done
check "each object holds its own source's code" sh -c "
    nm '$S/out/release/a.c.o' | grep -q ' T from_c\$' &&
    nm '$S/out/release/a.cc.o' | grep -q ' T from_cc\$' &&
    nm '$S/out/release/a.cpp.o' | grep -q ' T from_cpp\$'"
check "no object named after the stem alone" test ! -e "$S/out/release/a.o"

check "cc -c compiles it (the C is valid)" \
    cc -I"$S/src/inc" -c "$S/src/sub/m.c" -o "$S/ref.o"
# ---- include cycles among guarded headers ----------------------------------
check "a guarded include cycle builds (exit 0)" test $rc -eq 0
check "no cycle error" sh -c "! grep -qi cycle '$S/o1'"
check "both includers built" sh -c "test -s '$S/out/release/sub/m.c.o' &&
    test -s '$S/out/release/sub/n.c.o'"
vsched_run --config "$S/b.ini" --deps >"$S/deps" 2>&1
check "--deps lists each includer's header" sh -c "
    grep -qx 'sub/m.c: inc/a.h' '$S/deps' && grep -qx 'sub/n.c: inc/b.h' '$S/deps'"

vsched_run --config "$S/b.ini" >"$S/o3" 2>&1
check "then nothing to do" grep -q "nothing to do" "$S/o3"

# An edit of the header the other includes rebuilds both includers.
sed -i 's/A_VALUE 40/A_VALUE 41/' "$S/src/inc/a.h"
vsched_run --config "$S/b.ini" --report "$S/r4.json" >"$S/o4" 2>&1
check "editing a.h rebuilds (exit 0)" test $? -eq 0
check "editing a.h rebuilds m.c and n.c (n.c reaches a.h through b.h)" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .path] | sort | join(" ")' "$S/r4.json")" = "sub/m.c sub/n.c"
sed -i 's/B_VALUE 2/B_VALUE 3/' "$S/src/inc/b.h"
vsched_run --config "$S/b.ini" --report "$S/r5.json" >"$S/o5" 2>&1
check "editing b.h rebuilds m.c and n.c" \
    test "$(jq -r '[.files[] | select(.rebuilt) | .path] | sort | join(" ")' "$S/r5.json")" = "sub/m.c sub/n.c"
check "the objects equal cc's own" sh -c "
    cc -I'$S/src/inc' -c '$S/src/sub/m.c' -o '$S/ref.o' &&
    cmp -s '$S/ref.o' '$S/out/release/sub/m.c.o'"
finish
