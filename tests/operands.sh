#!/bin/sh
# One source, one object, however it is spelt. A name from the command
# line or from [batch] inputs is taken to the loader's canonical name
# before anything is built: `./a.c`, `.//a.c`, `sub/../a.c`, the absolute
# path and a symbolic link to a.c are all a.c, built once, counted once,
# linked once (ld refuses an object given twice: "multiple definition").
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
mkdir -p "$S/src/sub"
printf 'int a(void) { return 1; }\n' >"$S/src/a.c"
printf 'int b(void) { return 2; }\n' >"$S/src/b.c"
printf 'int a(void);\nint b(void);\nint main(void) { return a() + b() == 3 ? 0 : 1; }\n' \
    >"$S/src/main.c"
O="$S/out/release"

# built OUT: the "N built" count of a run's summary line.
built() { sed -n 's/^vsched-run: \([0-9]*\) built, .*/\1/p' "$1"; }

cc_ini "$S/p.ini"
vsched_run --config "$S/p.ini" ./a.c a.c .//a.c sub/../a.c "$S/src/a.c" \
    >"$S/o1" 2>&1
check "five spellings of a.c build (exit 0)" test $? -eq 0
check "... one object, built once" test "$(built "$S/o1")" = 1
check "... named a.c" test -f "$O/a.c.o" -a "$(find "$O" -name '*.o' | wc -l)" -eq 1
vsched_run --config "$S/p.ini" ./a.c "$S/src/a.c" >"$S/o2" 2>&1
check "a second run of other spellings has nothing to do" \
    grep -q "^vsched-run: nothing to do" "$S/o2"

# The same in [batch] inputs, with a link: the object is linked once.
cc_ini "$S/l.ini" "./main.c ./a.c *.c"
printf 'link = prog\n' >>"$S/l.ini"
vsched_run --config "$S/l.ini" >"$S/o3" 2>&1
check "inputs naming a.c and main.c twice link (exit 0)" test $? -eq 0
check "... b.c and main.c built (a.c is current)" test "$(built "$S/o3")" = 2
check "... the program runs" "$O/prog"

# A symbolic link is its target: a glob finding both builds one.
ln -s a.c "$S/src/alias.c"
rm -rf "$S/out" "$S/state"
vsched_run --config "$S/l.ini" >"$S/o4" 2>&1
check "a link to a.c among the inputs links (exit 0)" test $? -eq 0
check "... three objects built" test "$(built "$S/o4")" = 3
check "... no object for the link's name" test ! -e "$O/alias.c.o"
check "... the program runs" "$O/prog"

# A target named like a file: the bare name is the target, any other
# spelling of the file is the file (not the target its canonical name
# happens to equal).
rm -rf "$S/out" "$S/state" "$S/src/alias.c"
mkdir -p "$S/src/prog"
printf 'int main(void) { return 0; }\n' >"$S/src/prog/m.c"
cc_ini "$S/t.ini"
printf '[target.a.c]\nkind = executable\ninputs = prog/*.c\n' >>"$S/t.ini"
vsched_run --config "$S/t.ini" ./a.c >"$S/o5" 2>&1
check "./a.c with a target a.c builds the file (exit 0)" test $? -eq 0
check "... its object, and no program" \
    test -f "$O/a.c.o" -a ! -e "$O/a.c" -a ! -e "$O/prog/m.c.o"
vsched_run --config "$S/t.ini" a.c >"$S/o6" 2>&1
check "the bare name a.c builds the target (exit 0)" test $? -eq 0
check "... the program" test -x "$O/a.c"

# --deps lists each input once, however many ways it is spelt.
vsched_run --config "$S/p.ini" --deps ./a.c a.c "$S/src/a.c" b.c >"$S/o7" 2>&1
check "--deps with three spellings of a.c (exit 0)" test $? -eq 0
check "... lists a.c once and b.c once" \
    test "$(grep -c '^a.c:' "$S/o7")" -eq 1 -a "$(grep -c '^b.c:' "$S/o7")" -eq 1

# The root is a name too: printed escaped in what the operands' check says.
E=$(printf '\033')
mkdir -p "$S/r${E}[31mx"
printf 'int e(void) { return 0; }\n' >"$S/r${E}[31mx/e.c"
cc_ini "$S/e.ini"
sed -i "s|^root = src|root = r${E}[31mx|" "$S/e.ini"
vsched_run --config "$S/e.ini" nosuch.c >"$S/o8" 2>&1
check "a missing FILE under a root named with ESC: exit 2" test $? -eq 2
check "... the root printed escaped" grep -q 'r\\e\[31mx' "$S/o8"
check "... no raw ESC byte in the output" sh -c "! grep -q '$E' '$S/o8'"

# A root reached through a symbolic link: a missing file named by the
# root's own spelling is missing, not outside it.
ln -s src "$S/srclink"
cc_ini "$S/k.ini"
sed -i "s|^root = src|root = srclink|" "$S/k.ini"
vsched_run --config "$S/k.ini" "$S/srclink/nosuch.c" >"$S/o9" 2>&1
check "a missing FILE under a root given through a link: exit 2" test $? -eq 2
check "... said to be missing, not outside the root" \
    sh -c "grep -q 'is no target and no file' '$S/o9' && ! grep -q outside '$S/o9'"
vsched_run --config "$S/k.ini" "$S/srclink/a.c" >"$S/o10" 2>&1
check "an existing FILE spelt the same way builds (exit 0)" test $? -eq 0
# A backslash is an ordinary character of a name, in a pattern as out of
# one; a bracket quotes a wildcard. -n lists what a run would build.
mkdir -p "$S/g"
for f in 'back\slash.c' backslash.c 'st*r.c' star.c; do
    printf 'int v;\n' >"$S/g/$f"
done
cc_ini "$S/g.ini" 'back\sla*.c st[*]r.c'
sed -i "s|^root = src|root = g|" "$S/g.ini"
vsched_run --config "$S/g.ini" -n >"$S/o11" 2>&1
check "inputs with a backslash and a bracketed star (exit 0)" test $? -eq 0
# (A name's backslash is printed doubled.)
check "... select back\\slash.c and st*r.c, and only those" sh -c \
    "grep -qF ' back\\\\slash.c: new' '$S/o11' && grep -qF ' st*r.c: new' '$S/o11' &&
     test \$(grep -c ': new' '$S/o11') -eq 2"
# A relative name never climbs above the root, not even back into it.
vsched_run --config "$S/p.ini" -n ../src/a.c >"$S/o12" 2>&1
check "../src/a.c under root src: exit 2" test $? -eq 2
check "... said to be outside the root" grep -q "'../src/a.c' is outside the loader root" "$S/o12"
vsched_run --config "$S/p.ini" -n "$S/src/a.c" >"$S/o13" 2>&1
check "... while its absolute path is taken (exit 0)" sh -c "test $? -eq 0 && ! grep -q outside '$S/o13'"
# [batch] inputs patterns are held to the same rule as names: nothing
# outside the root, by '..', a symbolic link or an absolute path; an
# absolute pattern under the root is taken; a link that leads nowhere is
# refused as a name naming it is. Each refusal: exit 2, before building,
# naming the pattern and the file.
mkdir -p "$S/elsewhere" "$S/r/src"
printf 'int e;\n' >"$S/elsewhere/e.c"
printf 'int q;\n' >"$S/r/src/q.c"
ln -s ../elsewhere "$S/r/ext"
cc_ini "$S/r.ini"
sed -i "s|^root = src|root = r|" "$S/r.ini"
inputs() { vsched_run --config "$S/r.ini" -n --set "batch.inputs=$1" >"$S/o14" 2>&1; }
for pat in '../elsewhere/*.c' 'ext/*.c' 'e*/*.c' "$S/elsewhere/*.c" '/*.c' \
    'src/./*.c'; do
    inputs "$pat"
    check "inputs = $pat: exit 2" test $? -eq 2
    check "... naming the pattern, saying it is outside or why" sh -c \
        "grep -qF \"pattern '$pat': \" '$S/o14' &&
         grep -q \"outside the loader root\\|'\\.' or '\\.\\.' segment\" '$S/o14'"
    check "... building nothing" sh -c "! grep -q '^artifact' '$S/o14'"
done
check "a pattern given with --set is said to come from --set" \
    grep -q "^vsched-run: --set: \[batch\] inputs: pattern 'src/\./\*\.c'" "$S/o14"
inputs "$S/r/src/q*.c"
check "an absolute pattern under the root is taken (exit 0)" sh -c \
    "test $? -eq 0 && grep -q '^artifact release src/q.c: new' '$S/o14'"
inputs 'src/*/'
check "a pattern ending in '/' matches no file (exit 2)" sh -c \
    "test $? -eq 2 && grep -q \"pattern 'src/\*/' matches no file\" '$S/o14'"
ln -s nowhere.c "$S/r/src/dangling.c"
for pat in 'src/*.c' 'src/**' 'src/dangling.c'; do
    inputs "$pat"
    check "a dangling link, inputs = $pat: exit 2" test $? -eq 2
    check "... saying it leads nowhere" sh -c "grep -qF \"pattern '$pat'\" '$S/o14' &&
        grep -q 'is a symbolic link that leads nowhere' '$S/o14'"
done
rm "$S/r/src/dangling.c"
# A FIFO named is no source either, as it matches no wildcard.
mkfifo "$S/r/src/fifo.c"
inputs 'src/fifo.c'
check "a FIFO named in inputs: exit 2, before building" sh -c \
    "test $? -eq 2 && grep -q \"pattern 'src/fifo.c' names no regular file\" '$S/o14'"
inputs 'src/*.c'
check "... while a wildcard skips it (exit 0)" sh -c \
    "test $? -eq 0 && test \"\$(grep -c '^artifact' '$S/o14')\" -eq 1"
rm "$S/r/src/fifo.c"
# An absolute pattern is taken where its directory leads: through a link
# to the tree, or under the root "/".
ln -s "$S/r" "$S/rlink"
inputs "$S/rlink/src/q*.c"
check "an absolute pattern through a link to the root (exit 0)" sh -c \
    "test $? -eq 0 && grep -q '^artifact release src/q.c: new' '$S/o14'"
vsched_run --config "$S/r.ini" -n --set loader.root=/ --set "batch.inputs=$S/r/src/q*.c" >"$S/o15" 2>&1
check "an absolute pattern under the root / (exit 0)" sh -c \
    "test $? -eq 0 && grep -qF 'artifact release ${S#/}/r/src/q.c: new' '$S/o15'"
# A dangling link a target excludes is not held against its pattern.
ln -s nowhere.c "$S/r/src/gone.c"
printf '[target.t]\nkind = executable\ninputs = src/*.c\nexclude = src/gone.c\n' >>"$S/r.ini"
vsched_run --config "$S/r.ini" -n --set batch.inputs=src/q.c >"$S/o16" 2>&1
check "an excluded dangling link: the target's pattern stands (exit 0)" sh -c \
    "test $? -eq 0 && grep -q '^artifact release src/q.c' '$S/o16'"
# One name per file, however an input reaches it: a directory link
# inside the root, and an absolute name, as the run names them (-n,
# --deps and --report too).
rm -f "$S/r/src/gone.c"
sed -i '/^\[target.t\]/,$d' "$S/r.ini"
mkdir -p "$S/r/sub"
printf 'int s;\n' >"$S/r/sub/s.c"
ln -s sub "$S/r/insub"
rm "$S/r/ext"
vsched_run --config "$S/r.ini" -n --set 'batch.inputs=*/*.c' >"$S/o17" 2>&1
check "a file reached through a directory link: -n names it once, as it is" sh -c \
    "test \"\$(grep '^artifact' '$S/o17' | sort | tr '\n' '|')\" = 'artifact release src/q.c: new|artifact release sub/s.c: new|'"
vsched_run --config "$S/r.ini" --deps --set 'batch.inputs=*/*.c' >"$S/o18" 2>&1
check "... and --deps lists it once" sh -c \
    "test \"\$(grep -c '^sub/s.c:' '$S/o18')\" -eq 1 && ! grep -q '^insub/' '$S/o18'"
vsched_run --config "$S/r.ini" -n --set "batch.inputs=$S/r/src/q.c" >"$S/o19" 2>&1
check "an absolute name: -n names it as the run does" \
    grep -qx 'artifact release src/q.c: new' "$S/o19"
finish
