/*
 * bad_major -- test plugin built for a future plugin ABI major (2.0).
 *
 * The host must reject it after reading only abi_major/abi_minor: a
 * different major may lay the descriptor out differently, so nothing else
 * in it is trusted (the rest is deliberately left zero).
 */
#include <vsched/plugin.h>

static const vsched_plugin bad_major_descriptor = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR + 1,
    .abi_minor = 0,
    .size = sizeof(vsched_plugin),
};

VSCHED_PLUGIN_DEFINE(bad_major)
{
    return &bad_major_descriptor;
}
