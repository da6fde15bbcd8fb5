#!/bin/sh
# Compiles over a real distccd on 127.0.0.1: with DISTCC_FALLBACK=0 every
# compile of a generated tree ran in the daemon (its log says so), the
# objects equal a local build's byte for byte, the `remote` resource is
# sized from the host list (or [resource.remote]) and --stats shows its
# peak; bad host lists, pump mode and `distcc ccache` are refused with
# exit 2 and a message naming what to change.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
scratch
. "$top_srcdir/tests/distcc_lib.sh"
distccd_start
gen_tree 40
cd "$SCRATCH"
n=$(wc -l <tree/sources.txt)
root=$(cd tree && pwd -P)

write_ini local ""
vsched_run --config local.ini -j2 -q >local.out 2>&1
check "the local build succeeds" test $? -eq 0

# 1. Through distccd, every compile there, fallbacks off.
write_ini dist distcc
DISTCC_FALLBACK=0 vsched_run --config dist.ini -j8 --stats >dist.out 2>&1
check "the distcc build succeeds" test $? -eq 0
check "distccd compiled each of the $n sources" \
    test "$(compiled_remotely)" -eq "$n"
check "no compile failed in distccd" \
    sh -c "! grep -q 'COMPILE_ERROR\|failed' distccd.log"
check "objects equal the local build's" same_objects local dist
line=$(grep '^stats: resource remote ' dist.out)
echo "  $line"
peak=$(echo "$line" | sed -n 's/.* peak=\([0-9]*\).*/\1/p')
check "remote capacity is the list's slots (8)" \
    sh -c "echo '$line' | grep -q 'capacity=8 '"
check "remote was held by overlapping compiles, never over 8" \
    test "${peak:-0}" -ge 2 -a "${peak:-0}" -le 8
check "nothing holds remote after the run" \
    sh -c "echo '$line' | grep -q 'in_use=0$'"

# 2. [resource.remote] capacity overrides the slots; -j deeper than it.
write_ini capped distcc "[resource.remote]" "capacity = 3"
DISTCC_FALLBACK=0 vsched_run --config capped.ini -j8 --stats >capped.out 2>&1
check "the capped build succeeds" test $? -eq 0
line=$(grep '^stats: resource remote ' capped.out)
peak=$(echo "$line" | sed -n 's/.* peak=\([0-9]*\).*/\1/p')
check "capacity=3 is used, peak within it ($line)" \
    sh -c "echo '$line' | grep -q 'capacity=3 ' && test ${peak:-9} -ge 1 -a ${peak:-9} -le 3"
check "capped objects equal the local build's" same_objects local capped

# 3. distcc_hosts sets the list for the children; the environment's is
# ignored then (it points nowhere).
before=$(grep -c COMPILE_OK distccd.log)
write_ini keyed distcc "distcc_hosts = 127.0.0.1:$PORT/5 # loopback"
DISTCC_HOSTS=127.0.0.1:1/2 DISTCC_FALLBACK=0 \
    vsched_run --config keyed.ini -j8 --stats >keyed.out 2>&1
check "the distcc_hosts build succeeds" test $? -eq 0
check "its compiles went to the daemon" \
    test "$(grep -c COMPILE_OK distccd.log)" -eq "$((before + n))"
check "remote capacity is distcc_hosts' 5" \
    grep -q '^stats: resource remote capacity=5 ' keyed.out
check "keyed objects equal the local build's" same_objects local keyed

# 4. Without a launcher there is no remote resource.
rm -rf state-local out/local
vsched_run --config local.ini -j2 --stats >local2.out 2>&1
check "local --stats has no remote line" \
    sh -c "! grep -q '^stats: resource remote' local2.out"

# 4b. A real compile error through distcc is the compiler's, said once,
# without distcc's hint.
cp -R tree badtree
bad=$(head -1 badtree/sources.txt)
echo 'int broken(void) { return }' >>"badtree/$bad"
write_ini bad distcc
sed -i 's|^root = tree$|root = badtree|' bad.ini
DISTCC_FALLBACK=0 vsched_run --config bad.ini -j8 -k 0 >bad.out 2>&1
check "a syntax error fails the build: exit 1" test $? -eq 1
check "the compiler's error is shown" grep -q "expected" bad.out
check "it is not blamed on distcc" \
    sh -c "! grep -q 'distcc could not compile' bad.out"
check "the other objects were built" \
    test "$(find out/bad -name '*.o' | wc -l)" -eq "$((n - 1))"

# 5. Refusals: exit 2, the offending text, what to do.
refused() {
    _name=$1; _want=$2; shift 2
    write_ini "$_name" "$@"
    DISTCC_FALLBACK=0 vsched_run --config "$_name.ini" >"$_name.out" 2>&1
    _rc=$?
    check "$_name: exit 2 (got $_rc)" test "$_rc" -eq 2
    check "$_name: says '$_want'" grep -q -- "$_want" "$_name.out"
}
refused badlimit "'127.0.0.1:$PORT/x': the job limit" distcc \
    "distcc_hosts = 127.0.0.1:$PORT/x"
refused badopt "unknown option 'zip'" distcc "distcc_hosts = red,zip"
refused pump "pump mode" distcc "distcc_hosts = 127.0.0.1:$PORT/4,cpp"
refused order "write 'ccache distcc'" "distcc ccache"
refused zeroconf "set \[resource.remote\] capacity" distcc \
    "distcc_hosts = +zeroconf"
DISTCC_HOSTS='red/0' vsched_run --config dist.ini >envbad.out 2>&1
check "a bad DISTCC_HOSTS: exit 2" test $? -eq 2
check "a bad DISTCC_HOSTS is named" grep -q "DISTCC_HOSTS: 'red/0'" envbad.out
finish
