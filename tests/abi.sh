#!/bin/sh
# Plugin ABI 1.1 through the real vsched-run, with a real executor built
# out of tree: examples/plugin-include (text with nested @include lines),
# compiled by its own 3-line Makefile against this tree's headers.
#   - Artifact expands nested includes from the blockers' snapshots (the
#     closure): outputs byte for byte;
#   - editing a file two includes deep rebuilds exactly its dependents,
#     with the new text (the snapshot at the generation the hash covers);
#   - the output goes through tmp_path (no temporaries left), the link job
#     concatenates the artifacts;
#   - an include cycle fails (VSCHED_PLUGIN_CYCLES_FORBIDDEN), a warning
#     becomes an error with strict per profile (get_bool + fallback);
#   - create()'s blame puts the key's FILE:LINE first; an empty required
#     key is refused.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE_PROG:-make}" "$@"; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no cc"; exit 77; }
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }

mkdir -p "$SCRATCH/pc"
sed -e "s|^includedir=.*|includedir=$top_srcdir/include|" \
    "$top_builddir/vsched.pc" >"$SCRATCH/pc/vsched.pc"
PKG_CONFIG_PATH="$SCRATCH/pc" PKG_CONFIG_LIBDIR="$SCRATCH/pc"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR

ex="$SCRATCH/incl"
cp -R "$top_srcdir/examples/plugin-include" "$ex"
chmod -R u+w "$ex"
rm -rf "$ex/build" "$ex/incl.so"
check "the example's Makefile is three lines" test "$(wc -l <"$ex/Makefile")" -eq 3
submake -C "$ex" CFLAGS="-O2 -Werror" >"$SCRATCH/make.out" 2>&1
rc=$?
cat "$SCRATCH/make.out"
check "make builds incl.so with -Wall -Wextra -Werror (exit 0)" test "$rc" -eq 0
syms=$(nm -D --defined-only "$ex/incl.so" | awk '{print $3}')
check "incl.so exports exactly its entry symbol" test "$syms" = "incl_LTX_vsched_plugin_entry"

ini="$ex/incl.ini"
vsched_run --config "$ini" -v >"$SCRATCH/run.out" 2>&1
rc=$?
cat "$SCRATCH/run.out"
check "vsched-run builds the tree (exit 0)" test "$rc" -eq 0
printf '== built by incl ==\nIntroduction\n[banner]\n(c) the authors\nWelcome.\n' >"$SCRATCH/want"
check "intro: includes expanded two levels deep" \
    cmp "$SCRATCH/want" "$ex/build/release/chapters/intro.txt.out"
printf '== built by incl ==\nUsage\n[banner]\n(c) the authors\nRun it.\n' >"$SCRATCH/want"
check "usage: the @warn line left out, the rest expanded" \
    cmp "$SCRATCH/want" "$ex/build/release/chapters/usage.txt.out"
check "the book is the artifacts concatenated" \
    sh -c "cat '$ex/build/release/chapters/intro.txt.out' '$ex/build/release/chapters/usage.txt.out' | cmp - '$ex/build/release/guide.book'"
check "no temporary output left behind" \
    test -z "$(find "$ex/build" -name '*.tmp.*')"

# A file two includes deep changes: both chapters get the new text.
printf '(c) the new authors\n' >"$ex/tree/common/legal.txt"
vsched_run --config "$ini" >"$SCRATCH/run2.out" 2>&1
check "rebuild after a deep edit (exit 0)" test $? -eq 0
check "intro has the new deep text" \
    grep -qx '(c) the new authors' "$ex/build/release/chapters/intro.txt.out"
check "usage has the new deep text" \
    grep -qx '(c) the new authors' "$ex/build/release/chapters/usage.txt.out"
check "... and no old text anywhere" \
    sh -c "! grep -rq '(c) the authors' '$ex/build/release'"

# A profile with strict on: the warning fails the file; the other builds.
cat >>"$ini" <<'INI'
[profile.strict]
strict = yes
header = == STRICT ==
INI
vsched_run --config "$ini" --profile strict -k 0 >"$SCRATCH/strict.out" 2>&1
rc=$?
cat "$SCRATCH/strict.out"
check "strict profile: the build fails (exit 1)" test "$rc" -eq 1
check "strict profile: the failure names the file and line of @warn" \
    grep -q "chapters/usage.txt:3: error: usage examples are not written yet" "$SCRATCH/strict.out"
check "strict profile: intro still built with the profile's header" \
    grep -qx '== STRICT ==' "$ex/build/strict/chapters/intro.txt.out"

# An include cycle is an error in this language.
printf '@include chapters/intro.txt\n' >>"$ex/tree/common/legal.txt"
vsched_run --config "$ini" -k 0 >"$SCRATCH/cycle.out" 2>&1
rc=$?
cat "$SCRATCH/cycle.out"
check "an include cycle fails the build (exit 1)" test "$rc" -eq 1
check "... and says cycle" grep -qi "cycle" "$SCRATCH/cycle.out"
printf '(c) the new authors\n' >"$ex/tree/common/legal.txt"

# create() blames a key: its FILE:LINE comes first, exit 2.
line=$(grep -n '^header = == STRICT ==' "$ini" | cut -d: -f1)
sed -i 's/^header = == STRICT ==$/header = @oops/' "$ini"
vsched_run --config "$ini" >"$SCRATCH/blame.out" 2>&1
rc=$?
cat "$SCRATCH/blame.out"
check "a refused header: exit 2" test "$rc" -eq 2
check "a refused header: the message starts at the key's line" \
    grep -q "^vsched-run: $ini:$line: plugin 'incl': cannot create executor: header: must not start with '@'" "$SCRATCH/blame.out"

# An empty value does not satisfy a required key.
sed -i 's/^header = @oops$/header = ok/; s/^out_dir = build$/out_dir =/' "$ini"
oline=$(grep -n '^out_dir =$' "$ini" | cut -d: -f1)
vsched_run --config "$ini" >"$SCRATCH/empty.out" 2>&1
rc=$?
cat "$SCRATCH/empty.out"
check "an empty required key: exit 2" test "$rc" -eq 2
check "an empty required key: FILE:LINE, the key, and why" \
    grep -q "$ini:$oline: \[executor\] out_dir: .*empty" "$SCRATCH/empty.out"
finish
