#!/bin/sh
# The built-in plugins are part of vsched-run itself: an installed copy
# (make install-binPROGRAMS install-pluginsLTLIBRARIES into a staging
# DESTDIR) moved to another prefix, with its plugin directory removed and
# no search path set, still lists fs, cc, cmd and null as built-ins and
# builds with them -- a C program and library through fs + cc, a text file
# through cmd, a fake tree through null. Nothing of the program names a
# plugin .so, libvsched.so or the configured prefix.
. "${top_srcdir:-.}/tests/lib.sh"
scratch
S=$SCRATCH
unset VSCHED_PLUGIN_PATH LD_LIBRARY_PATH

${MAKE:-make} -s -C "$top_builddir" DESTDIR="$S/stage" \
    install-binPROGRAMS install-pluginsLTLIBRARIES >"$S/install.out" 2>&1
rc=$?
cat "$S/install.out"
check "vsched-run and the plugin modules install into a staging tree" \
    test $rc -eq 0
bin=$(find "$S/stage" -type f -name vsched-run -path '*/bin/*' | head -n 1)
plugdir=$(find "$S/stage" -type f -name 'cc.so' | head -n 1)
check "the installed program and the cc module are there" \
    sh -c "test -x '$bin' && test -f '$plugdir'"
prefix=${bin%/bin/vsched-run}
mv "$prefix" "$S/moved"
rm -rf "$S/stage"
P=$S/moved/bin/vsched-run
rm -rf "$S/moved/lib/vsched/plugins"
check "the installed tree moved to another prefix, its plugin directory removed" \
    sh -c "test -x '$P' && test ! -e '$S/moved/lib/vsched/plugins'"

readelf -d "$P" >"$S/dyn.out" 2>&1
check "the program needs no plugin and no libvsched by name" \
    sh -c "! grep -E 'NEEDED.*\[(fs|cc|cmd|null)\.so\]|NEEDED.*libvsched' '$S/dyn.out'"
check "nor a run path into the configured prefix" \
    sh -c "! grep -E 'RUNPATH|RPATH' '$S/dyn.out'"

(cd "$S" && timeout 60 "$P" --list-plugins) >"$S/list.out" 2>&1
check "--list-plugins exits 0" test $? -eq 0
cat "$S/list.out"
for p in fs cc cmd null; do
    check "$p is listed as a built-in" grep -qE "^$p +[0-9.]+ .* built-in " "$S/list.out"
done

# fs + cc: a static library and a program linking it.
mkdir -p "$S/c/src/lib" "$S/c/src/app"
printf 'int seven(void) { return 7; }\n' >"$S/c/src/lib/seven.c"
printf '#include <stdio.h>\nint seven(void);\nint main(void) { printf("%%d\\n", seven()); return 0; }\n' \
    >"$S/c/src/app/main.c"
find "$S/c" -type f -exec touch -d '-1 minute' {} +
cat >"$S/c.ini" <<'EOF'
[vsched]
state_dir = c-state
[loader]
plugin = fs
root = c
[executor]
plugin = cc
out_dir = c-out
[target.seven]
kind = static
inputs = src/lib/**/*.c
[target.app]
kind = executable
inputs = src/app/*.c
link_with = seven
EOF
timeout 120 "$P" --config "$S/c.ini" >"$S/c.out" 2>&1
rc=$?
cat "$S/c.out"
check "the moved program builds a library and a program with fs and cc" test $rc -eq 0
check "which runs" test "$("$S/c-out/release/app" 2>&1)" = "7"

# cmd: a copy through cp.
mkdir -p "$S/t"
printf 'text\n' >"$S/t/a.txt"
cat >"$S/t.ini" <<'EOF'
[vsched]
state_dir = t-state
[loader]
plugin = fs
root = t
[executor]
plugin = cmd
artifact = cp {in} {out}
out_dir = t-out
[batch]
inputs = *.txt
EOF
timeout 60 "$P" --config "$S/t.ini" >"$S/t.out" 2>&1
rc=$?
cat "$S/t.out"
check "the moved program builds with cmd" test $rc -eq 0
check "its output is the copy" cmp -s "$S/t/a.txt" "$S/t-out/release/a.txt"

# null: a fake tree, loader and executor both.
cat >"$S/n.ini" <<'EOF'
[vsched]
state_dir = n-state
[loader]
plugin = null
[executor]
plugin = null
[batch]
inputs = f1 f2 f3
EOF
timeout 60 "$P" --config "$S/n.ini" -q >"$S/n.out" 2>&1
rc=$?
cat "$S/n.out"
check "the moved program runs null as loader and executor" test $rc -eq 0
finish
