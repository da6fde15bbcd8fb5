/*
 * no_entry -- a shared object that is not a vsched plugin: it exports a
 * symbol, but not vsched_plugin_entry (neither the plain nor the
 * no_entry_LTX_ spelling).
 */
#include <vsched/plugin.h>

VSCHED_PLUGIN_EXPORT int no_entry_not_a_plugin(void);

/* Contract: returns 42; exists only so that the module exports something. */
VSCHED_PLUGIN_EXPORT int no_entry_not_a_plugin(void)
{
    return 42;
}
