#!/bin/sh
# Permission errors through the real vsched-run and real gcc: a source the
# run may not read and an output directory it may not write fail their
# file with a headline naming the cause ("permission denied"), never the
# bare "input/output error" of the status code, and the other files
# build.
#
# Permissions do not bind root, so as root the runs go through a user
# namespace (`unshare -U`: root there has no capability over the files
# outside, so their mode bits apply), else as nobody (`setpriv`, the
# scratch tree opened to everyone). Without either the test cannot deny
# root anything and is skipped (exit 77).
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
as_user=
open_tree=0
if [ "$(id -u)" -ne 0 ]; then
    as_user=
elif unshare -U true 2>/dev/null; then
    as_user="unshare -U"
elif setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    open_tree=1
else
    echo "SKIP: running as root without unshare -U or setpriv: a mode" \
         "cannot deny root"
    exit 77
fi
denied() { # vsched-run where the modes apply
    timeout 120 $as_user "$top_builddir/vsched-run" "$@"
}

mkdir -p "$S/src"
cc_ini "$S/p.ini"
printf 'int a(void) { return 1; }\n' >"$S/src/a.c"
printf 'int b(void) { return 2; }\n' >"$S/src/b.c"
[ $open_tree -eq 1 ] && chmod -R a+rwX "$S"

# A source that cannot be read.
chmod 000 "$S/src/b.c"
denied --config "$S/p.ini" -k 0 >"$S/o1" 2>&1
rc=$?
cat "$S/o1"
check "an unreadable source fails the build (exit 1)" test $rc -eq 1
check "its headline names the cause" grep -q \
    "^FAILED: b.c \[release\] (source): cannot load b.c: permission denied$" \
    "$S/o1"
check "the other file builds" test -s "$S/out/release/a.c.o"
check "no 'input/output error' is printed" \
    sh -c "! grep -q 'input/output error' '$S/o1'"
chmod 644 "$S/src/b.c"

# An output directory that cannot be written.
rm -rf "$S/out" "$S/state"
mkdir -p "$S/out/release"
[ $open_tree -eq 1 ] && chmod a+rwx "$S/out"
chmod 555 "$S/out/release"
denied --config "$S/p.ini" -k 0 >"$S/o2" 2>&1
rc=$?
cat "$S/o2"
check "an unwritable output directory fails the build (exit 1)" \
    test $rc -eq 1
check "its headline names the cause" grep -q \
    "^FAILED: a.c \[release\] (artifact): cannot build a.c: permission denied$" \
    "$S/o2"
check "no 'input/output error' is printed" \
    sh -c "! grep -q 'input/output error' '$S/o2'"
chmod 777 "$S/out/release"

# With the modes restored, the same tree builds.
denied --config "$S/p.ini" >"$S/o3" 2>&1
rc=$?
cat "$S/o3"
check "the restored tree builds (exit 0)" test $rc -eq 0
check "both objects" test -s "$S/out/release/a.c.o" -a -s "$S/out/release/b.c.o"
finish
