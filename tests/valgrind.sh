#!/bin/sh
# vsched-run under valgrind (memcheck): the example build, a failing
# build (a compile error), a no-op rebuild and --clean, each with
# --leak-check=full --error-exitcode=1: zero errors, zero leaks of any
# kind. Run by `make valgrind` (not by make check: it takes a minute).
. "${top_srcdir:-.}/tests/lib.sh"
scratch
cp -R "$top_srcdir/conf" "$top_srcdir/examples" "$SCRATCH/"
chmod -R u+w "$SCRATCH"
ini="$SCRATCH/conf/example.ini"
VG="valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
--error-exitcode=99 --track-fds=no --quiet --trace-children=no"
# vsched-run is a libtool wrapper in the build tree: run the program.
vg() {
    timeout 600 "$top_builddir/libtool" --mode=execute $VG \
        "$top_builddir/vsched-run" "$@"
}
vg_case() { # NAME WANT LOG ARGS...: the status, and no valgrind report
    vname=$1 want=$2 log=$3
    shift 3
    vg "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    check "$vname: exit $want (99 = a valgrind error)" test $rc -eq "$want"
    check "$vname: no valgrind report" sh -c "! grep -q '^==[0-9]*==' '$log'"
}
vg_case "the example" 0 "$SCRATCH/build.out" --config "$ini"
vg_case "a no-op rebuild" 0 "$SCRATCH/noop.out" --config "$ini"
printf 'int broken(void) { return missing_symbol_xyz; }\n' \
    >"$SCRATCH/examples/hello/src/zz_broken.c"
vg_case "a failing build" 1 "$SCRATCH/fail.out" --config "$ini" -k 0
vg_case "--deps" 0 "$SCRATCH/deps.out" --config "$ini" --deps
vg_case "--clean" 0 "$SCRATCH/clean.out" --config "$ini" --clean
vg_case "a configuration error" 2 "$SCRATCH/cfg.out" --config "$ini" \
    --set vsched.cpu_threads=abc
finish
