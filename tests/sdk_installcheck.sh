#!/bin/sh
# `make installcheck`: the INSTALLED vsched, as a plugin author meets it.
# Run by installcheck-local (mk/sdk.am) with the install directories in the
# environment: DESTDIR (may be empty), prefix, bindir, libdir, includedir,
# pkgconfigdir, pluginsdir, pkgdatadir, mandir.
#
#   - the installed files are where vsched.pc and the man pages say;
#   - the installed plugin-skeleton is built out of tree with its own
#     3-line Makefile, pkg-config reading the installed vsched.pc
#     (PKG_CONFIG_PATH; with DESTDIR, a copy relocated into DESTDIR);
#   - `make install` puts it into pkg-config's pluginsdir and the installed
#     vsched-run finds it there and builds the skeleton's tree;
#   - the installed vsched-plugin-test drives it; the installed
#     conf/example.ini builds the installed examples/hello.
# Anything this test installs into pluginsdir is removed at exit.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
: "${DESTDIR=}"
for v in prefix bindir libdir includedir pkgconfigdir pluginsdir pkgdatadir mandir; do
    eval "val=\${$v:-}"
    [ -n "$val" ] || { echo "FAIL: \$$v is not set (run through make installcheck)"; exit 1; }
done
inst() { echo "$DESTDIR$1"; }
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u DESTDIR "${MAKE_PROG:-make}" "$@"; }
run() { timeout 120 "$(inst "$bindir")/vsched-run" "$@"; }
vpt() { timeout 120 "$(inst "$bindir")/vsched-plugin-test" "$@"; }
# The built-in plugins are shared objects the programs link against, found
# through a RUNPATH of pluginsdir: a staged (DESTDIR) copy needs the path.
LD_LIBRARY_PATH="$(inst "$libdir"):$(inst "$pluginsdir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
unset VSCHED_PLUGIN_PATH

# ---- what is installed -------------------------------------------------------
for f in "$includedir/vsched/plugin.h" "$includedir/vsched/vsched.h" \
    "$pkgconfigdir/vsched.pc" "$bindir/vsched-run" "$bindir/vsched-plugin-test" \
    "$pluginsdir/fs.so" "$pluginsdir/cc.so" "$pluginsdir/null.so" \
    "$mandir/man1/vsched-run.1" "$mandir/man1/vsched-plugin-test.1" \
    "$mandir/man5/vsched.ini.5" "$mandir/man7/vsched-plugin.7" \
    "$pkgdatadir/conf/example.ini" "$pkgdatadir/examples/hello/src/main.c" \
    "$pkgdatadir/examples/plugin-skeleton/Makefile" \
    "$pkgdatadir/examples/plugin-skeleton/skeleton.c" \
    "$pkgdatadir/examples/plugin-skeleton/tree/greeting.txt" \
    "$includedir/vsched/abi/plugin-1.0.h" \
    "$mandir/man7/vsched-plugin-guide.7" "$mandir/man3/vsched_plugin.3" \
    "$mandir/man3/vsched_ctx.3" "$mandir/man3/vsched_config.3" \
    "$mandir/man3/vsched_loader_ops.3" "$mandir/man3/vsched_executor_ops.3" \
    "$mandir/man3/vsched_artifact_in.3" \
    "$pkgdatadir/examples/plugin-include/incl.c" \
    "$pkgdatadir/examples/plugin-include/tree/common/legal.txt"; do
    check "installed: $f" test -f "$(inst "$f")"
done
check "installed: libvsched shared library" \
    sh -c "ls '$(inst "$libdir")'/libvsched.so* >/dev/null 2>&1"
if command -v groff >/dev/null 2>&1; then
    for m in man1/vsched-run.1 man1/vsched-plugin-test.1 man5/vsched.ini.5 man7/vsched-plugin.7 \
        man7/vsched-plugin-guide.7 man3/vsched_plugin.3 man3/vsched_ctx.3 \
        man3/vsched_config.3 man3/vsched_loader_ops.3 man3/vsched_executor_ops.3; do
        out=$(groff -man -z -ww "$(inst "$mandir")/$m" 2>&1)
        check "installed $m formats without warnings" test -z "$out"
    done
fi

# ---- pkg-config reads the installed vsched.pc ----------------------------------
mkdir -p "$SCRATCH/pc"
if [ -n "$DESTDIR" ]; then
    # Staged install: absolute directories in the .pc move into DESTDIR.
    sed "s|^\([a-z_]*\)=/|\1=$DESTDIR/|" "$(inst "$pkgconfigdir")/vsched.pc" \
        >"$SCRATCH/pc/vsched.pc"
    PKG_CONFIG_PATH="$SCRATCH/pc"
else
    PKG_CONFIG_PATH="$pkgconfigdir"
fi
PKG_CONFIG_LIBDIR="$PKG_CONFIG_PATH"
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
check "pkg-config finds the installed vsched" pkg-config --exists vsched
check "pkg-config pluginsdir is the installed plugin dir" \
    test "$(pkg-config --variable=pluginsdir vsched)" = "$(inst "$pluginsdir")"
check "pkg-config --cflags is the installed include dir" \
    test "$(pkg-config --cflags vsched | sed 's/ *$//')" = "-I$(inst "$includedir")"
check "pkg-config abi_major/abi_minor match the installed header" \
    test "$(pkg-config --variable=abi_major vsched).$(pkg-config --variable=abi_minor vsched)" = \
         "$(sed -n 's/^#define VSCHED_PLUGIN_ABI_MAJOR \([0-9]*\)$/\1/p' "$(inst "$includedir")/vsched/plugin.h").$(sed -n 's/^#define VSCHED_PLUGIN_ABI_MINOR \([0-9]*\)$/\1/p' "$(inst "$includedir")/vsched/plugin.h")"

# ---- the installed skeleton, built out of tree --------------------------------------
sk="$SCRATCH/sk"
cp -R "$(inst "$pkgdatadir")/examples/plugin-skeleton" "$sk"
chmod -R u+w "$sk"
submake -C "$sk" CFLAGS="-O2 -Wall -Wextra -Werror" >"$SCRATCH/make.out" 2>&1
rc=$?
cat "$SCRATCH/make.out"
check "make in the installed skeleton: exit 0" test "$rc" -eq 0
check "compiled against the installed headers" \
    grep -q -- "-I$(inst "$includedir")" "$SCRATCH/make.out"
check "skeleton.so built" test -f "$sk/skeleton.so"

plugdir=$(inst "$pluginsdir")
if [ -w "$plugdir" ]; then
    installed_sk="$plugdir/skeleton.so"
    [ -e "$installed_sk" ] && { echo "FAIL: $installed_sk exists already"; exit 1; }
    trap 'rm -f "$installed_sk"; rm -rf "$SCRATCH"' EXIT
    submake -C "$sk" install >"$SCRATCH/install.out" 2>&1
    check "make install into pluginsdir: exit 0" test $? -eq 0
    search="$plugdir"
else
    # A read-only prefix: stage the plugin and point the search at it.
    submake -C "$sk" install DESTDIR="$SCRATCH/stage" >"$SCRATCH/install.out" 2>&1
    check "make install DESTDIR=stage: exit 0" test $? -eq 0
    installed_sk="$SCRATCH/stage$plugdir/skeleton.so"
    search="$SCRATCH/stage$plugdir"
fi
check "the plugin is in pkg-config's pluginsdir" test -f "$installed_sk"
rm -f "$sk/skeleton.so" # only the installed copy can be found now

if [ -z "$DESTDIR" ] && [ "$search" = "$plugdir" ]; then
    # vsched-run searches its compiled-in plugin dir: no path needed.
    run --config "$sk/skeleton.ini" >"$SCRATCH/run.out" 2>&1
else
    VSCHED_PLUGIN_PATH="$search" run --config "$sk/skeleton.ini" >"$SCRATCH/run.out" 2>&1
fi
rc=$?
cat "$SCRATCH/run.out"
check "installed vsched-run builds the skeleton tree: exit 0" test "$rc" -eq 0
check "summary: 3 built, 0 failed" grep -q "vsched-run: 3 built, 0 failed" "$SCRATCH/run.out"
printf 'built by skeleton\nuse names.txt\nHello from the skeleton plugin.\n' >"$SCRATCH/want"
check "greeting.txt.out is the skeleton's output" \
    cmp -s "$SCRATCH/want" "$sk/build/release/greeting.txt.out"

(cd "$sk" && VSCHED_PLUGIN_PATH="$search" vpt --config skeleton.ini skeleton greeting.txt) \
    >"$SCRATCH/t.out" 2>&1
rc=$?
cat "$SCRATCH/t.out"
check "installed vsched-plugin-test on it: exit 0" test "$rc" -eq 0
abi="$(pkg-config --variable=abi_major vsched).$(pkg-config --variable=abi_minor vsched)"
check "... loaded the installed copy" grep -q "^plugin: skeleton 1.0, ABI $abi, executor, thread-safe ($installed_sk)$" "$SCRATCH/t.out"
check "... artifact published" grep -q "^greeting.txt: artifact\[release\]: ok $sk/build/release/greeting.txt.out" "$SCRATCH/t.out"
check "... no violations" grep -q "0 failed operations, 0 contract violations" "$SCRATCH/t.out"

# ---- the installed include example, built out of tree ------------------------------
ie="$SCRATCH/incl"
cp -R "$(inst "$pkgdatadir")/examples/plugin-include" "$ie"
chmod -R u+w "$ie"
submake -C "$ie" CFLAGS="-O2 -Werror" >"$SCRATCH/imake.out" 2>&1
rc=$?
cat "$SCRATCH/imake.out"
check "make in the installed include example: exit 0" test "$rc" -eq 0
check "... against the installed headers" \
    grep -q -- "-I$(inst "$includedir")" "$SCRATCH/imake.out"
run --config "$ie/incl.ini" >"$SCRATCH/irun.out" 2>&1
rc=$?
cat "$SCRATCH/irun.out"
check "installed vsched-run builds the include tree: exit 0" test "$rc" -eq 0
printf '== built by incl ==\nIntroduction\n[banner]\n(c) the authors\nWelcome.\n' >"$SCRATCH/want"
check "intro.txt.out: nested includes expanded from the blockers" \
    cmp -s "$SCRATCH/want" "$ie/build/release/chapters/intro.txt.out"

# ---- a plugin built against the installed frozen 1.0 header ------------------------
cat >"$SCRATCH/old.c" <<'C'
#include <vsched/abi/plugin-1.0.h>
_Static_assert(V1_0_ABI_MAJOR == 1 && V1_0_ABI_MINOR == 0, "1.0");
int old_layout_size(void) { return (int)sizeof(v1_0_plugin); }
C
check "the installed 1.0 header compiles alone" \
    cc $(pkg-config --cflags vsched) -Wall -Wextra -Werror -c -o "$SCRATCH/old.o" "$SCRATCH/old.c"
cat >"$SCRATCH/t10.c" <<'C'
#define VSCHED_PLUGIN_TARGET_MINOR 0
#include <vsched/plugin.h>
#include <vsched/abi/plugin-1.0.h>
_Static_assert(sizeof(vsched_executor_ops) == sizeof(v1_0_executor_ops), "1.0 ops");
_Static_assert(sizeof(vsched_config) == sizeof(v1_0_config), "1.0 config");
C
check "the installed header targets 1.0 with VSCHED_PLUGIN_TARGET_MINOR=0" \
    cc $(pkg-config --cflags vsched) -Wall -Wextra -Werror -c -o "$SCRATCH/t10.o" "$SCRATCH/t10.c"

# ---- the installed example configuration -------------------------------------------
mkdir -p "$SCRATCH/ex"
cp -R "$(inst "$pkgdatadir")/conf" "$(inst "$pkgdatadir")/examples" "$SCRATCH/ex/"
chmod -R u+w "$SCRATCH/ex"
nsrc=$(ls "$SCRATCH"/ex/examples/hello/src/*.c | wc -l)
run --config "$SCRATCH/ex/conf/example.ini" >"$SCRATCH/ex.out" 2>&1
rc=$?
cat "$SCRATCH/ex.out"
check "installed example.ini builds the installed hello: exit 0" test "$rc" -eq 0
check "... one object per source" \
    test "$(ls "$SCRATCH"/ex/build/hello/release/src/*.o | wc -l)" -eq "$nsrc"

run --list-plugins >"$SCRATCH/l.out" 2>&1
check "installed --list-plugins: the built-ins" \
    sh -c "grep -q '^fs .* built-in' '$SCRATCH/l.out' && grep -q '^cc .* built-in' '$SCRATCH/l.out'"
finish
