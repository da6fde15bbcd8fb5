#!/bin/sh
# A generated multi-target C project through the real vsched-run, cc and
# fs: a static library (nested folders, an excluded folder with a file
# that does not compile, a name with spaces and shell metacharacters), a
# shared library (its objects compiled with -fPIC, one of them also in the
# static library, so compiled twice), two executables linking them (one
# with its own defines and an rpath, the other run through
# LD_LIBRARY_PATH). Built, run, rebuilt incrementally with exact rebuilt
# sets from --report; TARGETS on the command line; --list-targets; the
# configuration errors (cycle, unknown or executable link_with, a glob
# matching nothing, a bad kind, everything excluded).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
T=$S/tree
ODD='src/util/odd name $(touch PWNED);x.c'
mkdir -p "$T/include" "$T/src/util/deep/deeper" "$T/src/shape" \
    "$T/src/common" "$T/src/excluded" "$T/apps/hello" "$T/apps/calc/ops"

cat >"$T/include/util.h" <<'EOF'
int util_twice(int x);
int util_deep(int x);
int util_odd(void);
const char *version(void);
EOF
cat >"$T/include/shape.h" <<'EOF'
int shape_area(int w, int h);
const char *shape_version(void);
EOF
cat >"$T/src/util/twice.c" <<'EOF'
#include "util.h"
int util_twice(int x) { return 2 * x; }
EOF
cat >"$T/src/util/deep/deeper/deep.c" <<'EOF'
#include "util.h"
int util_deep(int x) { return x + 100; }
EOF
cat >"$T/$ODD" <<'EOF'
int util_odd(void) { return 7; }
EOF
cat >"$T/src/common/version.c" <<'EOF'
const char *version(void) { return "1.0"; }
EOF
cat >"$T/src/excluded/broken.c" <<'EOF'
#error this folder is excluded and must never be compiled
EOF
cat >"$T/src/shape/area.c" <<'EOF'
#include "shape.h"
const char *version(void);
int shape_calls;
int shape_area(int w, int h) { shape_calls++; return w * h; }
const char *shape_version(void) { return version(); }
EOF
cat >"$T/apps/hello/main.c" <<'EOF'
#include <stdio.h>
#include "util.h"
#include "shape.h"
int main(void)
{
    printf("hello %d %d %d %d %s\n", util_twice(21), util_deep(1),
           util_odd(), shape_area(3, 4), shape_version());
    return 0;
}
EOF
cat >"$T/apps/calc/main.c" <<'EOF'
#include <stdio.h>
#include "shape.h"
#include "ops.h"
int main(void)
{
    printf("calc %d\n", add(CALC_SCALE * shape_area(3, 4), 0));
    return 0;
}
EOF
cat >"$T/apps/calc/ops/ops.h" <<'EOF'
int add(int a, int b);
EOF
cat >"$T/apps/calc/ops/add.c" <<'EOF'
#include "ops.h"
int add(int a, int b) { return a + b; }
EOF
find "$T" -type f -exec touch -d '-1 minute' {} +

cat >"$S/b.ini" <<'EOF'
[vsched]
cpu_threads = 2
state_dir = state

[loader]
plugin = fs
root = tree

[executor]
plugin = cc
compiler = cc
cflags = -O1
include_dirs = include
out_dir = out

[cache]
max_size = 0

[target.libutil]
kind = static
inputs = src/**/*.c
exclude = src/excluded src/shape

[target.libshape]
kind = shared
inputs = src/shape/*.c src/common/version.c

[target.hello]
kind = executable
inputs = apps/hello/*.c src/common/version.c
link_with = libutil libshape

[target.calc]
kind = executable
inputs = apps/calc/**/*.c
include_dirs = apps/calc/ops
defines = CALC_SCALE=3
ldflags = -Wl,-rpath,$ORIGIN
link_with = libshape
EOF
O=$S/out/release

# jobs REPORT: "kind name" of the jobs that ran (made, not kept), sorted.
jobs() {
    jq -r '.jobs[] | select(.rebuilt) | "\(.kind) \(.name)"' "$1" | sort
}
# objects REPORT: "profile path" of the objects compiled, sorted.
objects() {
    jq -r '.files[] | select(.rebuilt) | "\(.profile) \(.path)"' "$1" | sort
}

# ---- list ----------------------------------------------------------------------------
vsched_run --config "$S/b.ini" --list-targets >"$S/list.out" 2>&1
check "--list-targets exits 0" test $? -eq 0
printf '%s\n' "libutil static 4 inputs" "libshape shared 2 inputs" \
    "hello executable 2 inputs links libutil libshape" \
    "calc executable 2 inputs links libshape" >"$S/list.want"
check "--list-targets: each target, its kind, its inputs after excludes, its libraries" \
    cmp -s "$S/list.want" "$S/list.out"
cat "$S/list.out"

# ---- cold build ---------------------------------------------------------------------
build "$S" cold
rc=$?
cat "$S/cold.out"
check "cold build exits 0" test $rc -eq 0
# version.c is in libutil and hello with equal flags, in libshape with
# -fPIC: compiled twice, not three times.
same_list "every object once per flag set: version.c twice (plain and -fPIC), nothing excluded" \
    "$(printf '%s\n' "release+calc apps/calc/ops/add.c" "release+calc apps/calc/main.c" \
        "release apps/hello/main.c" "release src/common/version.c" \
        "release src/util/deep/deeper/deep.c" "release src/util/twice.c" \
        "release $ODD" "release+libshape src/common/version.c" \
        "release+libshape src/shape/area.c" | sort)" \
    "$(objects "$S/cold.json")"
same_list "every target ran as a job of its kind" \
    "$(printf '%s\n' "link calc" "link hello" "shared libshape" "static libutil" | sort)" \
    "$(jobs "$S/cold.json")"
check "the run says what it archived and linked" \
    sh -c "grep -qx 'vsched-run: archived $O/libutil.a' '$S/cold.out' &&
           grep -qx 'vsched-run: linked $O/libshape.so' '$S/cold.out' &&
           grep -qx 'vsched-run: linked $O/hello' '$S/cold.out'"
check "the static library is an archive of its four objects" \
    test "$(ar t "$O/libutil.a" | sort | tr '\n' ' ')" = \
    "deep.c.o odd name \$(touch PWNED);x.c.o twice.c.o version.c.o "
check "made deterministically (ar D: no dates, no owners)" \
    sh -c "ar tv '$O/libutil.a' | awk '{ print \$2 }' | sort -u | grep -qx '0/0'"
check "the shared library is a shared object with its soname" \
    sh -c "readelf -d '$O/libshape.so' | grep -q 'SONAME.*\[libshape.so\]'"
check "its objects were compiled with -fPIC (a global reached through the GOT)" \
    sh -c "readelf -rW '$S/out/release+libshape/src/shape/area.c.o' | grep -q 'GOTPCREL.*shape_calls'"
check "the library has no text relocations" \
    sh -c "! readelf -d '$O/libshape.so' | grep -q TEXTREL"
check "hello needs libshape.so dynamically" \
    sh -c "readelf -d '$O/hello' | grep -q 'NEEDED.*\[libshape.so\]'"
check "and no shell ever saw the odd name" \
    sh -c "test ! -e '$T/PWNED' && test ! -e '$S/PWNED' && test ! -e PWNED"
check "the excluded folder produced nothing" \
    test ! -e "$O/src/excluded"

LD_LIBRARY_PATH=$O "$O/hello" >"$S/hello.out" 2>&1
check "hello runs (LD_LIBRARY_PATH) and prints what both libraries compute" \
    test "$(cat "$S/hello.out")" = "hello 42 101 7 12 1.0"
env -u LD_LIBRARY_PATH "$O/hello" >/dev/null 2>&1
check "without LD_LIBRARY_PATH hello cannot find the shared library" \
    test $? -ne 0
env -u LD_LIBRARY_PATH "$O/calc" >"$S/calc.out" 2>&1
check "calc runs through its own rpath, with its defines and include_dirs" \
    test "$(cat "$S/calc.out")" = "calc 36"

# ---- incremental ---------------------------------------------------------------------
build "$S" noop
check "nothing changed: nothing to do" \
    test "$(cat "$S/noop.out")" = "vsched-run: nothing to do"

printf '#include "util.h"\nint util_deep(int x) { return x + 200; }\n' \
    >"$T/src/util/deep/deeper/deep.c"
touch -d '-10 seconds' "$T/src/util/deep/deeper/deep.c"
build "$S" deep
cat "$S/deep.out"
same_list "a nested source of the static library: that object only" \
    "release src/util/deep/deeper/deep.c" "$(objects "$S/deep.json")"
same_list "then the archive and the one program linking it" \
    "$(printf '%s\n' "link hello" "static libutil")" "$(jobs "$S/deep.json")"
LD_LIBRARY_PATH=$O "$O/hello" >"$S/hello.out" 2>&1
check "hello has the new code" test "$(cat "$S/hello.out")" = "hello 42 201 7 12 1.0"

build "$S" flags --set target.calc.defines=CALC_SCALE=4
same_list "a target's defines: its own objects only" \
    "$(printf '%s\n' "release+calc apps/calc/main.c" "release+calc apps/calc/ops/add.c")" \
    "$(objects "$S/flags.json")"
same_list "and its link" "link calc" "$(jobs "$S/flags.json")"
check "calc has the new define" test "$("$O/calc")" = "calc 48"

build "$S" ldflags --set target.calc.defines=CALC_SCALE=4 \
    --set "target.calc.ldflags=-Wl,-rpath,\$ORIGIN -Wl,-O1"
same_list "a target's ldflags: no object" "" "$(objects "$S/ldflags.json")"
same_list "only its link" "link calc" "$(jobs "$S/ldflags.json")"

printf 'int shape_area(int w, int h);\nconst char *shape_version(void);\n/* c */\n' \
    >"$T/include/shape.h"
touch -d '-10 seconds' "$T/include/shape.h"
build "$S" header --set target.calc.defines=CALC_SCALE=4 \
    --set "target.calc.ldflags=-Wl,-rpath,\$ORIGIN -Wl,-O1"
same_list "a header: exactly its includers, in each of their variants" \
    "$(printf '%s\n' "release apps/hello/main.c" "release+calc apps/calc/main.c" \
        "release+libshape src/shape/area.c" | sort)" "$(objects "$S/header.json")"

printf '/* a comment only */\n' >>"$T/src/util/deep/deeper/deep.c"
touch -d '-10 seconds' "$T/src/util/deep/deeper/deep.c"
build "$S" comment --set target.calc.defines=CALC_SCALE=4 \
    --set "target.calc.ldflags=-Wl,-rpath,\$ORIGIN -Wl,-O1"
cat "$S/comment.out"
same_list "a comment in a library source recompiles that object" \
    "release src/util/deep/deeper/deep.c" "$(objects "$S/comment.json")"
same_list "which comes out the same: the archive (ar D) and hello are kept" \
    "" "$(jobs "$S/comment.json")"
check "and say so" grep -q "hello is up to date" "$S/comment.out"

build "$S" variant --set target.calc.defines=CALC_SCALE=4 \
    --set "target.calc.ldflags=-Wl,-rpath,\$ORIGIN -Wl,-O1" \
    --set target.hello.defines=HELLO=1
same_list "defines for hello: its objects move to a variant of their own" \
    "$(printf '%s\n' "release+hello apps/hello/main.c" "release+hello src/common/version.c")" \
    "$(objects "$S/variant.json")"
build "$S" novariant --set target.calc.defines=CALC_SCALE=4 \
    --set "target.calc.ldflags=-Wl,-rpath,\$ORIGIN -Wl,-O1"
check "without them the variant no longer made is removed" \
    grep -q "removed $S/out/release+hello/apps/hello/main.c.o (apps/hello/main.c \[release+hello\] is no longer an input)" \
    "$S/novariant.out"
check "and its object is gone" test ! -e "$S/out/release+hello/apps/hello/main.c.o"
check "while the plain one is back" test -e "$O/apps/hello/main.c.o"

# ---- TARGETS on the command line ---------------------------------------------------------
vsched_run --config "$S/b.ini" --clean >/dev/null 2>&1
build "$S" only calc
rc=$?
check "vsched-run calc exits 0" test $rc -eq 0
same_list "builds calc and the library it links, nothing else" \
    "$(printf '%s\n' "link calc" "shared libshape")" "$(jobs "$S/only.json")"
check "hello and libutil were not built" \
    sh -c "test ! -e '$O/hello' && test ! -e '$O/libutil.a'"
check "calc runs" test "$("$O/calc")" = "calc 36"
build "$S" typo clac
rc=$?
check "a misspelt target: exit 2 with a suggestion" \
    sh -c "test $rc -eq 2 && grep -q \"'clac' is no target and no file under .*; did you mean target 'calc'\" '$S/typo.out'"
build "$S" rest
same_list "the full build then adds only what calc did not need" \
    "$(printf '%s\n' "link hello" "static libutil")" "$(jobs "$S/rest.json")"

# ---- a failing object stops only what needs it ---------------------------------------------
printf 'int add(int a, int b) { return a + ; }\n' >"$T/apps/calc/ops/add.c"
touch -d '-10 seconds' "$T/apps/calc/ops/add.c"
build "$S" broken -k 0
check "a compile error fails the run (exit 1)" test $? -eq 1
check "calc's link is not run, for the object that failed" \
    grep -q "link calc \[release\] not run" "$S/broken.out"
printf '#include "ops.h"\nint add(int a, int b) { return a + b; }\n' >"$T/apps/calc/ops/add.c"
touch -d '-10 seconds' "$T/apps/calc/ops/add.c"

# ---- a library links while other targets still compile ---------------------------------------
# The compile of calc's main.c waits (bounded) for libshape.so to appear:
# it can only appear if libshape's job waits for its own objects alone.
cat >"$S/slowcc" <<EOF
#!/bin/sh
case "\$*" in
*apps/calc/main.c*)
    i=0
    while [ ! -e "$S/out2/release/libshape.so" ] && [ \$i -lt 300 ]; do
        sleep 0.1; i=\$((i + 1))
    done
    [ -e "$S/out2/release/libshape.so" ] ||
        { echo "slowcc: libshape.so not linked while calc compiles" >&2; exit 1; } ;;
esac
exec cc "\$@"
EOF
chmod +x "$S/slowcc"
sed -e "s|^compiler = cc$|compiler = $S/slowcc|" -e 's|^out_dir = out$|out_dir = out2|' \
    -e 's|^state_dir = state$|state_dir = state2|' "$S/b.ini" >"$S/slow.ini"
vsched_run --config "$S/slow.ini" >"$S/slow.out" 2>&1
rc=$?
check "libshape linked while calc's object was still compiling" test $rc -eq 0
[ $rc -eq 0 ] || cat "$S/slow.out"

# ---- configuration errors ---------------------------------------------------------------------
# bad NAME WANT-REGEX INI-TEXT...: the config (b.ini's first 18 lines plus
# the text) is refused with exit 2 and a message matching WANT.
bad() {
    _name=$1
    _want=$2
    shift 2
    sed -n '1,18p' "$S/b.ini" >"$S/bad.ini"
    printf '%s\n' "$@" >>"$S/bad.ini"
    vsched_run --config "$S/bad.ini" >"$S/bad.out" 2>&1
    _rc=$?
    if [ $_rc -eq 2 ] && grep -qE -- "$_want" "$S/bad.out"; then
        pass "$_name"
    else
        fail "$_name (exit $_rc)"
        sed 's/^/    /' "$S/bad.out"
    fi
}
bad "a cycle among targets is an error naming it" \
    "bad.ini:2[0-9]: \[target.a\] link_with: cycle among targets: a -> b -> c -> a" \
    "[target.a]" "kind = static" "inputs = src/util/twice.c" "link_with = b" \
    "[target.b]" "kind = static" "inputs = src/util/twice.c" "link_with = c" \
    "[target.c]" "kind = shared" "inputs = src/util/twice.c" "link_with = a"
bad "a target linking itself is a cycle" \
    "cycle among targets: a -> a" \
    "[target.a]" "kind = static" "inputs = src/util/twice.c" "link_with = a"
bad "link_with an unknown target" \
    "bad.ini:2[0-9]: \[target.p\] link_with: no target 'nope'" \
    "[target.p]" "kind = executable" "inputs = apps/hello/main.c" "link_with = nope"
bad "link_with an executable" \
    "'q' is an executable" \
    "[target.q]" "kind = executable" "inputs = apps/calc/main.c" \
    "[target.p]" "kind = executable" "inputs = apps/hello/main.c" "link_with = q"
bad "a bad kind" \
    "\[target.p\] kind: expected executable, static or shared, got 'program'" \
    "[target.p]" "kind = program" "inputs = apps/hello/main.c"
vsched_run --config "$S/b.ini" --set 'target.calc.inputs=apps/**/nope*.c' >"$S/set.out" 2>&1
rc=$?
check "a pattern given with --set that matches nothing: said as --set" \
    sh -c "test $rc -eq 2 && grep -q \"^vsched-run: --set: \\[target.calc\\] inputs: pattern 'apps/\\*\\*/nope\\*.c' matches no file\" '$S/set.out'"
bad "a recursive glob matching nothing names the pattern" \
    "bad.ini:21: \[target.p\] inputs: pattern 'nothere/\*\*/\*.c' matches no file under" \
    "[target.p]" "kind = executable" "inputs = nothere/**/*.c"
bad "braces are not expanded" \
    "pattern 'src/\{util,shape\}/\*.c' matches no file" \
    "[target.p]" "kind = static" "inputs = src/{util,shape}/*.c"
bad "a target whose every input is excluded" \
    "\[target.p\] exclude removes every input" \
    "[target.p]" "kind = static" "inputs = src/util/*.c" "exclude = src/util"
bad "a missing kind" \
    "\[target.p\] missing required key 'kind'" \
    "[target.p]" "inputs = src/util/*.c"
bad "an unknown key in a target, with a suggestion" \
    "unknown key 'link_width' in \[target.p\]; did you mean 'link_with'" \
    "[target.p]" "kind = static" "inputs = src/util/*.c" "link_width = x"
sed -e 's/^plugin = cc$/plugin = cmd/' -e 's/^compiler = cc$/artifact = cp {in} {out}/' \
    -e '/^cflags\|^include_dirs/d' "$S/b.ini" >"$S/cmd.ini"
vsched_run --config "$S/cmd.ini" >"$S/cmd.out" 2>&1
rc=$?
check "targets with an executor that cannot link: exit 2, before anything runs" \
    sh -c "test $rc -eq 2 && grep -q \"executor 'cmd' cannot link\" '$S/cmd.out' &&
           ! grep -q artifact '$S/cmd.out'"
bad "[batch] link naming a target" \
    "\[batch\] link: 'p' is also a \[target.p\]" \
    "[batch]" "link = p" "inputs = apps/hello/main.c" \
    "[target.p]" "kind = static" "inputs = src/util/*.c"

# ---- conf/calc.ini, the example of this layout -----------------------------------------------
mkdir -p "$S/ex/conf" "$S/ex/examples"
cp "$top_srcdir/conf/calc.ini" "$S/ex/conf/"
cp -R "$top_srcdir/examples/calc" "$S/ex/examples/"
chmod -R u+w "$S/ex"
vsched_run --config "$S/ex/conf/calc.ini" >"$S/ex.out" 2>&1
rc=$?
cat "$S/ex.out"
check "conf/calc.ini builds" test $rc -eq 0
E=$S/ex/build/calc/release
check "its interpreter evaluates" test "$("$E/calc" "1 + 2 * 3" "sqrt(16)")" = "$(printf '7\n4')"
check "its compiler, linked with the shared core, prints RPN" \
    test "$(env -u LD_LIBRARY_PATH "$E/calcc" "(1 + 2) * 3")" = "1 2 + 3 *"
check "its tests pass" test "$("$E/calc-tests")" = "calc tests passed"
"$E/calc" "2 *" >/dev/null 2>"$S/ex.err"
check "and a bad expression is an error" grep -q "expected a number" "$S/ex.err"
vsched_run --config "$S/ex/conf/calc.ini" >"$S/ex2.out" 2>&1
check "rebuilding it has nothing to do" \
    test "$(cat "$S/ex2.out")" = "vsched-run: nothing to do"

# ---- a target named like the object of one of its inputs ---------------------------------------
# [target.a.c.o] would be written over out_dir/PROFILE/a.c.o, the object
# it links: refused with a message, the object left as compiled.
C=$S/collide
mkdir -p "$C/src"
echo 'int main(void) { return 0; }' >"$C/src/a.c"
cc_ini "$C/c.ini"
printf '[target.a.c.o]\nkind = executable\ninputs = a.c\n' >>"$C/c.ini"
sed -i '/^\[batch\]/,/^profiles/d' "$C/c.ini"
vsched_run --config "$C/c.ini" >"$C/1.out" 2>&1
rc=$?
cat "$C/1.out"
check "a target whose output is its input's object fails (exit 1)" test $rc -eq 1
check "... saying which object it would replace" \
    grep -q "output of target 'a.c.o'.*is the object of a.c" "$C/1.out"
check "... and the object is still an object (ELF type REL)" \
    test "$(od -An -t u2 -j 16 -N 2 "$C/out/release/a.c.o" | tr -d ' ')" = 1
finish
