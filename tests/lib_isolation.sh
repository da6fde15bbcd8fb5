#!/bin/sh
# libvsched never includes host code: no file of src/lib includes a header
# of src/host (or of one of its layer folders), names a host symbol (vr_*),
# or reaches outside include/vsched and its own directory.
. "${top_srcdir:-.}/tests/lib.sh"

lib="$top_srcdir/src/lib"
check "src/lib exists" test -d "$lib"

# Quoted includes name the library's own headers (files of src/lib).
own=$(cd "$lib" && ls *.h | sed 's/\./\\./g' | paste -sd '|')
bad=$(grep -n '#include' "$lib"/*.c "$lib"/*.h | grep -v -E "#include <[a-z0-9_/]+\\.h>|#include \"($own)\"" || true)
check "src/lib includes only system, public and own headers" test -z "$bad"
[ -n "$bad" ] && echo "$bad"

host=$(grep -n -E 'host/|\bvr_[a-z_]+\(' "$lib"/*.c "$lib"/*.h || true)
check "src/lib names no host symbol" test -z "$host"
[ -n "$host" ] && echo "$host"

# Host headers are included as "LAYER/file.h" against src/host; the core is
# never built with that path, and never names a layer even with <>.
layers=$(cd "$top_srcdir/src/host" && ls -d */ | tr -d / | paste -sd '|')
check "src/host has its layer folders" test -n "$layers"
lay=$(grep -n -E "#include [<\"]($layers)/" "$lib"/*.c "$lib"/*.h || true)
check "src/lib includes no host layer" test -z "$lay"
[ -n "$lay" ] && echo "$lay"

pub=$(grep -n '#include' "$top_srcdir"/include/vsched/plugin.h | grep -v -E '<std(def|int)\.h>' || true)
check "plugin.h includes nothing of ours" test -z "$pub"

# The library's exported symbols are all vsched_*.
so="$top_builddir/.libs/libvsched.so"
if [ -f "$so" ]; then
    extra=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^vsched_' || true)
    check "libvsched exports only vsched_* symbols" test -z "$extra"
fi
finish
