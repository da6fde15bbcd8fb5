#!/bin/sh
# The artifact cache: a branch switch away and back (every file rewritten,
# a few with other content) costs restores, not compiles; --clean keeps
# the cache, --clean --cache removes it; a cache too small is trimmed.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/incr_lib.sh"
scratch
S=$SCRATCH
mktree "$S" --seed 23 --files 24 --headers 8 --dirs 3 --funcs 3 ||
    { echo "cannot generate the tree"; exit 1; }
all=$(sort "$S/tree/sources.txt")

build "$S" a1
check "branch A builds" test $? -eq 0
cp -R "$S/tree" "$S/branch-a"

# "git checkout B": two headers and a source differ; every file rewritten.
edit_code "$S/tree/include/l2/h001.h"
edit_code "$S/tree/include/l3/h004.h"
edit_code "$S/tree/src/d1/f0004.c"
find "$S/tree" -type f -exec touch {} +
changed=$({ includers "$S" include/l2/h001.h; includers "$S" include/l3/h004.h;
    echo src/d1/f0004.c; } | sort -u)
build "$S" b1 --stats
same_list "switching to B rebuilds exactly the files B changes" "$changed" \
    "$(rebuilt "$S/b1.json")"
check "... by compiling them (B was never built)" \
    test "$(stat_of "$S/b1.json" compiled)" -eq "$(echo "$changed" | wc -l)"
check "every other file was only re-hashed" \
    test "$(stat_of "$S/b1.json" sources_hashed)" -gt 24

# "git checkout A": A's bytes again, every file rewritten once more.
rm -rf "$S/tree"
cp -R "$S/branch-a" "$S/tree"
find "$S/tree" -type f -exec touch {} +
build "$S" a2 --explain
same_list "switching back rebuilds the same files" "$changed" "$(rebuilt "$S/a2.json")"
same_list "... all of them restored from the cache" "$changed" "$(cached "$S/a2.json")"
check "... none compiled" test "$(stat_of "$S/a2.json" compiled)" -eq 0
check "--explain says restored from cache" \
    test "$(grep -c '; restored from cache$' "$S/a2.out")" -eq "$(echo "$changed" | wc -l)"
check "the cache counted the hits" \
    test "$(jq .stats.cache.hits "$S/a2.json")" -eq "$(echo "$changed" | wc -l)"
mkdir "$S/objs-a"
(cd "$S/out" && find . -name '*.o' | sort | while read -r f; do
    mkdir -p "$S/objs-a/$(dirname "$f")" && cp "$f" "$S/objs-a/$f"; done)

# ---- --clean keeps the cache; the build after it restores everything -----------
# A user's files beside the outputs, named like their temporaries but not
# one of the forms executors write, stay.
obj=$(cd "$S/out" && find . -name '*.o' | sort | head -n 1)
printf 'mine\n' >"$S/out/$obj.tmp.keep"
printf 'mine\n' >"$S/out/release/prog.tmp.backup"
vsched_run --config "$S/b.ini" --clean >"$S/clean.out" 2>&1
check "--clean exits 0" test $? -eq 0
check "--clean says what it removed" \
    grep -q "^vsched-run: removed 25 outputs and the state in $S/state$" "$S/clean.out"
check "--clean removes every object and the program" \
    test -z "$(find "$S/out" -type f ! -name '*.tmp.keep' ! -name '*.tmp.backup')"
check "... and leaves the user's files named like temporaries" \
    test -s "$S/out/$obj.tmp.keep" -a -s "$S/out/release/prog.tmp.backup"
rm -f "$S/out/$obj.tmp.keep" "$S/out/release/prog.tmp.backup"
check "--clean removes the state database" test ! -e "$S/state/state.db"
check "--clean keeps the cache" test -d "$S/state/cache/objects"
build "$S" after-clean
same_list "the build after --clean rebuilds everything" "$all" "$(rebuilt "$S/after-clean.json")"
same_list "... all from the cache" "$all" "$(cached "$S/after-clean.json")"
check "... byte for byte as before" diff -r "$S/objs-a/release" "$S/out/release" -x prog

# ---- the state lost, the outputs kept: restored onto themselves ----------------------
# Each output is then already a link to its cache object, and rename(2)
# of the restore's temporary onto it does nothing: the temporary must not
# stay behind.
rm "$S/state/state.db"
build "$S" lost-state
check "with the state lost, the build restores everything (exit 0)" \
    test "$(stat_of "$S/lost-state.json" compiled)" -eq 0
check "... and leaves no temporary beside the outputs" \
    test -z "$(find "$S/out" -name '*.tmp.*')"

# ---- --clean --cache -------------------------------------------------------------
vsched_run --config "$S/b.ini" --clean --cache >"$S/cleanc.out" 2>&1
check "--clean --cache exits 0" test $? -eq 0
check "--clean --cache removes the cache" test ! -e "$S/state/cache"
build "$S" after-cleanc
check "the build after --clean --cache compiles everything" \
    test "$(stat_of "$S/after-cleanc.json" compiled)" -eq 24
vsched_run --config "$S/b.ini" --cache >"$S/e.out" 2>&1
check "--cache without --clean is a usage error (exit 2)" test $? -eq 2
check "... saying so" grep -q -- "--cache goes with --clean" "$S/e.out"
mkdir -p "$S/out/keep" && : >"$S/out/keep/x.o"
vsched_run --config "$S/b.ini" --clean src/d1/f0004.c >"$S/e2.out" 2>&1
check "--clean with FILES is a usage error (exit 2)" test $? -eq 2
check "... saying it takes none" grep -q -- "--clean removes every output and the state: it takes no FILES (got 'src/d1/f0004.c')" "$S/e2.out"
check "... and removing nothing" test -e "$S/out/keep/x.o" -a -e "$S/state/state.db"
rm -rf "$S/out/keep"

# ---- a small cache is trimmed, least recently used first ---------------------------
build "$S" bad-size --set cache.max_size=lots
check "a bad [cache] max_size exits 2" test $? -eq 2
check "... naming the key and what is expected" \
    grep -q "^vsched-run: --set: \[cache\] max_size: expected a size such as 2G, 512M, 100K or 0, got 'lots'$" "$S/bad-size.out"
vsched_run --config "$S/b.ini" --clean --cache >/dev/null 2>&1
build "$S" small --set cache.max_size=20K --stats
sz=$(find "$S/state/cache/objects" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
check "a 20K cache holds at most 20K of objects ($sz bytes)" test "$sz" -le 20480 -a "$sz" -gt 0
check "... and stored every object on the way" \
    test "$(jq .stats.cache.stored "$S/small.json")" -eq 24

# ---- --clean after the sources went --------------------------------------------------
# --clean reads the state and removes outputs: it needs neither plugin, so
# a tree whose loader root is gone can still be cleaned.
mv "$S/tree" "$S/tree.away"
vsched_run --config "$S/b.ini" --clean >"$S/gone.out" 2>&1
rc=$?
cat "$S/gone.out"
check "--clean with the loader root gone succeeds (exit 0)" test $rc -eq 0
check "... and removes the outputs" test -z "$(find "$S/out" -type f)"
mv "$S/tree.away" "$S/tree"
finish
