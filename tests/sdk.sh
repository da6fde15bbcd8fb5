#!/bin/sh
# The plugin SDK against the BUILD tree, as a plugin author uses it:
#   - examples/plugin-skeleton is built out of tree by its own 3-line
#     Makefile, with pkg-config answering from a vsched.pc that points at
#     this tree's headers, and installed into the pkg-config pluginsdir;
#   - vsched-run builds the skeleton's tree with it (found through
#     [vsched] plugin_path, through VSCHED_PLUGIN_PATH, or not at all);
#   - vsched-plugin-test drives the skeleton, the built-ins (null, fs, cc),
#     a plugin compiled from the frozen ABI 1.0 header, and one that breaks
#     the rules on purpose.
# `make installcheck` does the same against an installed copy
# (tests/sdk_installcheck.sh).
. "${top_srcdir:-.}/tests/lib.sh"
scratch
vpt() { timeout 120 "$top_builddir/vsched-plugin-test" "$@"; }
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE_PROG:-make}" "$@"; }

command -v cc >/dev/null 2>&1 || { echo "SKIP: no cc"; exit 77; }
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }

# ---- pkg-config for the build tree --------------------------------------
mkdir -p "$SCRATCH/pc" "$SCRATCH/plugins"
sed -e "s|^includedir=.*|includedir=$top_srcdir/include|" \
    -e "s|^pluginsdir=.*|pluginsdir=$SCRATCH/plugins|" \
    "$top_builddir/vsched.pc" >"$SCRATCH/pc/vsched.pc"
PKG_CONFIG_PATH="$SCRATCH/pc"
PKG_CONFIG_LIBDIR="$SCRATCH/pc"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
hdr_major=$(sed -n 's/^#define VSCHED_PLUGIN_ABI_MAJOR \([0-9]*\)$/\1/p' "$top_srcdir/include/vsched/plugin.h")
hdr_minor=$(sed -n 's/^#define VSCHED_PLUGIN_ABI_MINOR \([0-9]*\)$/\1/p' "$top_srcdir/include/vsched/plugin.h")
check "vsched.pc abi_major is the header's ($hdr_major)" \
    test "$(pkg-config --variable=abi_major vsched)" = "$hdr_major"
check "vsched.pc abi_minor is the header's ($hdr_minor)" \
    test "$(pkg-config --variable=abi_minor vsched)" = "$hdr_minor"
check "pkg-config --cflags gives the include dir" \
    test "$(pkg-config --cflags vsched | sed 's/ *$//')" = "-I$top_srcdir/include"

# ---- the skeleton, out of tree, with its own Makefile -------------------
sk="$SCRATCH/sk"
cp -R "$top_srcdir/examples/plugin-skeleton" "$sk"
chmod -R u+w "$sk" # sources are read-only under distcheck
rm -rf "$sk/build" "$sk/skeleton.so"
check "the skeleton's Makefile is three lines" \
    test "$(wc -l <"$sk/Makefile")" -eq 3
submake -C "$sk" CFLAGS="-O2 -Wall -Wextra -Werror" >"$SCRATCH/make.out" 2>&1
rc=$?
cat "$SCRATCH/make.out"
check "make builds skeleton.so (exit 0)" test "$rc" -eq 0
check "the compile got pkg-config's cflags, -fPIC and -Werror" \
    grep -q -- "-Werror -fPIC -fvisibility=hidden -I$top_srcdir/include" "$SCRATCH/make.out"
check "skeleton.so exists" test -f "$sk/skeleton.so"
syms=$(nm -D --defined-only "$sk/skeleton.so" | awk '{print $3}')
check "skeleton.so exports exactly its entry symbol" \
    test "$syms" = "skeleton_LTX_vsched_plugin_entry"
submake -C "$sk" install >"$SCRATCH/install.out" 2>&1
check "make install exits 0" test $? -eq 0
check "make install puts it in pkg-config's pluginsdir" \
    test -f "$SCRATCH/plugins/skeleton.so"
submake -C "$sk" install DESTDIR="$SCRATCH/stage" >/dev/null 2>&1
check "make install honours DESTDIR" \
    test -f "$SCRATCH/stage$SCRATCH/plugins/skeleton.so"

# ---- vsched-run with it ---------------------------------------------------
ini="$sk/skeleton.ini"
vsched_run --config "$ini" >"$SCRATCH/run.out" 2>&1
rc=$?
cat "$SCRATCH/run.out"
check "vsched-run builds the skeleton tree (exit 0)" test "$rc" -eq 0
check "summary: 3 built, 0 failed" grep -q "vsched-run: 3 built, 0 failed" "$SCRATCH/run.out"
printf 'built by skeleton\nuse names.txt\nHello from the skeleton plugin.\n' >"$SCRATCH/want"
check "greeting.txt.out is banner + source" \
    cmp -s "$SCRATCH/want" "$sk/build/release/greeting.txt.out"
printf 'built by skeleton\nshared text\n' >"$SCRATCH/want"
check "common.txt.out is banner + source" \
    cmp -s "$SCRATCH/want" "$sk/build/release/common.txt.out"
check "exactly 3 outputs, no temporaries" \
    test "$(find "$sk/build/release" -type f | wc -l)" -eq 3

vsched_run --config "$ini" --profile loud -q >"$SCRATCH/loud.out" 2>&1
check "--profile loud exits 0" test $? -eq 0
check "[profile.loud] banner overrides the executor's" \
    test "$(head -n 1 "$sk/build/loud/names.txt.out")" = "BUILT LOUDLY"

vsched_run --config "$ini" --describe-plugin skeleton >"$SCRATCH/desc.out" 2>&1
check "--describe-plugin skeleton exits 0" test $? -eq 0
check "describe: origin is the built skeleton.so" \
    grep -q "^origin: *$sk/skeleton.so$" "$SCRATCH/desc.out"
check "describe: out_dir is a required path" \
    grep -q "^  out_dir *path *default: none  required" "$SCRATCH/desc.out"
check "describe: banner is per-profile" \
    grep -q "^  banner *string *default: built by skeleton  per-profile" "$SCRATCH/desc.out"

vsched_run --config "$ini" --set executor.bannr=x >"$SCRATCH/e.out" 2>&1
check "a misspelt skeleton key exits 2" test $? -eq 2
check "... with a suggestion from the skeleton's schema" \
    grep -q "unknown key 'bannr' in \[executor\]; did you mean 'banner'?" "$SCRATCH/e.out"

printf 'use common.txt\nerror this file is broken\n' >"$sk/tree/bad.txt"
vsched_run --config "$ini" -k 0 >"$SCRATCH/bad.out" 2>&1
check "a failing source exits 1" test $? -eq 1
check "the skeleton's diagnostic is shown with its line" \
    grep -q "bad.txt:2: error: this file is broken" "$SCRATCH/bad.out"
check "summary: the new file failed, the others are current" \
    grep -q "vsched-run: 0 built, 1 failed, 3 up to date" "$SCRATCH/bad.out"
rm -f "$sk/tree/bad.txt"

# Found in the installed pluginsdir through VSCHED_PLUGIN_PATH, else not.
rm -f "$sk/skeleton.so"
VSCHED_PLUGIN_PATH="$SCRATCH/plugins" vsched_run --config "$ini" -q >"$SCRATCH/p.out" 2>&1
check "the installed copy is found through VSCHED_PLUGIN_PATH" test $? -eq 0
VSCHED_PLUGIN_PATH= vsched_run --config "$ini" >"$SCRATCH/nf.out" 2>&1
check "without it: exit 2" test $? -eq 2
check "... 'plugin not found' lists where it looked" \
    grep -q "plugin 'skeleton' not found (searched: built-in, $sk" "$SCRATCH/nf.out"

# ---- vsched-plugin-test on the skeleton -------------------------------------
cp "$SCRATCH/plugins/skeleton.so" "$sk/skeleton.so"
rm -rf "$sk/build"
(cd "$sk" && vpt --root tree --set executor.out_dir=build ./skeleton.so greeting.txt) \
    >"$SCRATCH/t1.out" 2>&1
rc=$?
cat "$SCRATCH/t1.out"
check "plugin-test on the skeleton exits 0" test "$rc" -eq 0
check "names plugin and loader" \
    sh -c "grep -q '^plugin: skeleton 1.0, ABI $hdr_major.$hdr_minor, executor, thread-safe ($sk/skeleton.so)$' '$SCRATCH/t1.out' &&
           grep -q '^loader: fs 1.0, ABI $hdr_major.$hdr_minor, loader, thread-safe (built-in)$' '$SCRATCH/t1.out'"
check "realpath/load of greeting.txt" \
    sh -c "grep -q '^greeting.txt: realpath: ok greeting.txt$' '$SCRATCH/t1.out' &&
           grep -q '^greeting.txt: load: ok 46 bytes$' '$SCRATCH/t1.out'"
check "deps and blockers are printed" \
    sh -c "grep -q '^greeting.txt: extract_deps: ok 1 deps, 1 blockers$' '$SCRATCH/t1.out' &&
           grep -q '^greeting.txt: blocker: names.txt$' '$SCRATCH/t1.out' &&
           grep -q '^names.txt: blocker: common.txt$' '$SCRATCH/t1.out'"
# The blocker's analysis hash is the one handed to its dependent.
h_names=$(sed -n 's/^names.txt: analysis: ok analysis_hash=//p' "$SCRATCH/t1.out")
check "blockers are analysed first and their hash is passed on" \
    grep -q "^greeting.txt: blocker_hash: names.txt $h_names$" "$SCRATCH/t1.out"
check "artifact published from bytes" \
    grep -q "^greeting.txt: artifact\[release\]: ok $sk/build/release/greeting.txt.out (from bytes) artifact_hash=0x" "$SCRATCH/t1.out"
check "the published artifact is the skeleton's output" \
    test "$(head -n 1 "$sk/build/release/greeting.txt.out")" = "built by skeleton"
check "summary: 0 failed, 0 violations" \
    grep -q "^vsched-plugin-test: 1 files, 0 failed operations, 0 contract violations, 0 warnings$" "$SCRATCH/t1.out"

# Editing a blocker changes its dependents' analysis hash, not their content.
printf 'changed\n' >"$sk/tree/common.txt"
(cd "$sk" && vpt --root tree --set executor.out_dir=build --stage analysis ./skeleton.so greeting.txt) \
    >"$SCRATCH/t2.out" 2>&1
check "--stage analysis exits 0" test $? -eq 0
c1=$(grep '^greeting.txt: source:' "$SCRATCH/t1.out")
c2=$(grep '^greeting.txt: source:' "$SCRATCH/t2.out")
check "greeting's content hash is unchanged" test "$c1" = "$c2"
a1=$(grep '^greeting.txt: analysis:' "$SCRATCH/t1.out")
a2=$(grep '^greeting.txt: analysis:' "$SCRATCH/t2.out")
check "greeting's analysis hash changed with common.txt" test "$a1" != "$a2"
check "--stage analysis runs no artifact" \
    test -z "$(grep 'artifact' "$SCRATCH/t2.out")"

(cd "$sk" && vpt --config skeleton.ini --profile loud skeleton names.txt) >"$SCRATCH/t3.out" 2>&1
check "by name through --config's plugin_path, profile loud: exit 0" test $? -eq 0
check "... the loader comes from [loader]" grep -q "^loader: fs " "$SCRATCH/t3.out"
check "... artifact[loud]" grep -q "^names.txt: artifact\[loud\]: ok $sk/build/loud/names.txt.out" "$SCRATCH/t3.out"

(cd "$sk" && vpt --root tree --set executor.out_dir=build --cancelled ./skeleton.so names.txt) \
    >"$SCRATCH/t4.out" 2>&1
check "--cancelled: exit 1" test $? -eq 1
check "--cancelled: source gives up with VSCHED_ECANCELLED" \
    grep -q "^names.txt: source: failed VSCHED_ECANCELLED (cancelled)$" "$SCRATCH/t4.out"

(cd "$sk" && vpt --root tree ./skeleton.so names.txt) >"$SCRATCH/t5.out" 2>&1
check "missing required out_dir: exit 2" test $? -eq 2
check "... the host's schema message" grep -q "missing section \[executor\]" "$SCRATCH/t5.out"

# ---- vsched-plugin-test on the built-ins -------------------------------------
vpt null f5 --job link:prog >"$SCRATCH/n1.out" 2>&1
rc=$?
cat "$SCRATCH/n1.out"
check "null as loader + executor: exit 0" test "$rc" -eq 0
check "null: f0 is empty" grep -q "^f0: load: ok 0 bytes$" "$SCRATCH/n1.out"
check "null: f0 has no deps" grep -q "^f0: extract_deps: ok 0 deps, 0 blockers$" "$SCRATCH/n1.out"
check "null: every blocker of f5 is analysed" \
    test "$(grep -c '^f5: blocker_hash: ' "$SCRATCH/n1.out")" -eq \
         "$(grep -c '^f5: blocker: ' "$SCRATCH/n1.out")"
check "null: artifact writes no file" \
    grep -q "^f5: artifact\[release\]: ok no file (nothing written)" "$SCRATCH/n1.out"
check "null: job is called" grep -q "^job: job\[link prog release\]: ok 0 inputs, no file$" "$SCRATCH/n1.out"
vpt null f5 --job link:prog >"$SCRATCH/n2.out" 2>&1
check "null: a second run prints the same hashes" cmp -s "$SCRATCH/n1.out" "$SCRATCH/n2.out"

vpt --set executor.fail=f1 null f1 >"$SCRATCH/n3.out" 2>&1
check "null with fail = f1: exit 1" test $? -eq 1
check "... artifact fails with VSCHED_ETOOL" \
    grep -q "^f1: artifact\[release\]: failed VSCHED_ETOOL (external tool failed)$" "$SCRATCH/n3.out"
check "... and its diagnostic is printed" \
    grep -q "^f1: diag: error f1: null: forced failure$" "$SCRATCH/n3.out"

vpt --role loader --root "$top_srcdir/examples/hello" fs src/main.c include/../src/fmt.c ../etc/passwd \
    >"$SCRATCH/f1.out" 2>&1
check "fs loader role with an escaping name: exit 1" test $? -eq 1
check "fs: classify src/main.c as c" grep -q "^src/main.c: classify: ok c$" "$SCRATCH/f1.out"
check "fs: realpath canonicalises" grep -q "^include/../src/fmt.c: realpath: ok src/fmt.c$" "$SCRATCH/f1.out"
check "fs: escaping name is VSCHED_EESCAPE" \
    grep -q "^../etc/passwd: realpath: failed VSCHED_EESCAPE" "$SCRATCH/f1.out"
check "fs: no executor operation ran" test -z "$(grep ': source:' "$SCRATCH/f1.out")"

vpt --root "$top_srcdir/examples/hello" --set "executor.out_dir=$SCRATCH/cc" \
    --set executor.include_dirs=include cc src/main.c >"$SCRATCH/c1.out" 2>&1
check "cc on examples/hello/src/main.c: exit 0" test $? -eq 0
check "cc: main.c depends on include/greet.h" grep -q "^src/main.c: dep: include/greet.h$" "$SCRATCH/c1.out"
check "cc: the object is published via tmp_path" \
    grep -q "^src/main.c: artifact\[release\]: ok $SCRATCH/cc/release/src/main.c.o (via tmp_path)" "$SCRATCH/c1.out"
check "cc: main.c.o is an object file" test -s "$SCRATCH/cc/release/src/main.c.o"

# ---- a plugin compiled from the frozen ABI 1.0 header -------------------------
v10="$top_builddir/tests/abi/v1_0_plugin"
vpt --root "$sk/tree" --set "executor.out_dir=$SCRATCH/v10" "$v10" greeting.txt >"$SCRATCH/v1.out" 2>&1
check "plugin-test loads the ABI 1.0 plugin: exit 0" test $? -eq 0
check "... as ABI 1.0" grep -q "^plugin: v1_0_plugin 1.0.0, ABI 1.0, executor" "$SCRATCH/v1.out"
vsched_run --config "$ini" --set "executor.plugin=$v10" --set "executor.out_dir=$SCRATCH/v10" \
    --set executor.banner= -q >"$SCRATCH/v2.out" 2>&1
check "vsched-run refuses the skeleton's banner key for it: exit 2" test $? -eq 2
check "... because its 1.0 schema has only out_dir" \
    grep -q "unknown key 'banner' in \[executor\]; accepted keys: plugin, isolate, isolate_timeout, out_dir" "$SCRATCH/v2.out"
sed -e '/^banner/d' "$ini" >"$sk/v10.ini"
vsched_run --config "$sk/v10.ini" --set "executor.plugin=$v10" --set "executor.out_dir=$SCRATCH/v10" \
    >"$SCRATCH/v3.out" 2>&1
check "vsched-run builds with the ABI 1.0 plugin: exit 0" test $? -eq 0
check "... its output" test "$(cat "$SCRATCH/v10/release/greeting.txt.v10")" = "v1.0 release greeting.txt 46"

# ---- the checks of vsched-plugin-test -------------------------------------------
mkdir -p "$SCRATCH/sl"
echo hi >"$SCRATCH/sl/a.txt"
echo x >"$SCRATCH/sl/x.txt"
vpt --root "$SCRATCH/sl" "$top_builddir/tests/sdk/sloppy" a.txt >"$SCRATCH/s.out" 2>&1
rc=$?
cat "$SCRATCH/s.out"
check "a rule-breaking plugin: exit 1" test "$rc" -eq 1
check "foreign allocator is caught" \
    grep -q "^a.txt: contract: a deps name was not allocated with ctx->alloc$" "$SCRATCH/s.out"
check "leaked ctx->alloc blocks are counted" \
    grep -q "^-: contract: 4 ctx->alloc blocks were never handed to the host nor freed" "$SCRATCH/s.out"
check "impure analysis is caught" \
    grep -q "^a.txt: contract: analysis is not a pure function of its inputs: a second call gave another hash$" "$SCRATCH/s.out"
check "relative artifact path is caught" \
    grep -q "^a.txt: contract: artifact\[release\]: path 'relative/out.txt' is not absolute$" "$SCRATCH/s.out"
check "non-canonical blocker is a warning" \
    grep -q "^a.txt: warning: blocker './x.txt' is not canonical" "$SCRATCH/s.out"
check "summary counts 5 violations" \
    grep -q "^vsched-plugin-test: 1 files, 1 failed operations, 5 contract violations, 1 warnings$" "$SCRATCH/s.out"

# ---- usage ------------------------------------------------------------------------
vpt >"$SCRATCH/u.out" 2>&1
check "no PLUGIN: exit 2" test $? -eq 2
check "... says so" grep -q "no PLUGIN given" "$SCRATCH/u.out"
vpt --role both null >"$SCRATCH/u.out" 2>&1
check "bad --role: exit 2" test $? -eq 2
vpt --bogus null >"$SCRATCH/u.out" 2>&1
check "unknown option: exit 2" grep -q "unknown option '--bogus'" "$SCRATCH/u.out"
vpt no-such-plugin >"$SCRATCH/u.out" 2>&1
check "unknown plugin: exit 2" test $? -eq 2
check "... not found, with the search path" grep -q "plugin 'no-such-plugin' not found (searched: built-in" "$SCRATCH/u.out"
vpt --role loader cc >"$SCRATCH/u.out" 2>&1
check "a role the plugin lacks: exit 2" grep -q "plugin 'cc' does not provide role loader" "$SCRATCH/u.out"
vpt --version >"$SCRATCH/u.out" 2>&1
check "--version names the ABI" grep -q "plugin ABI $hdr_major.$hdr_minor" "$SCRATCH/u.out"
finish
