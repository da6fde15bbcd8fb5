// The public headers compile as C++ and give C linkage.
#include <vsched/plugin.h>
#include <vsched/vsched.h>

VSCHED_PLUGIN_DEFINE(header_cxx_probe)
{
    return nullptr;
}

int main()
{
    vsched_ctx ctx = {};
    ctx.size = sizeof ctx;
    vsched_plugin_entry_fn fn = header_cxx_probe_LTX_vsched_plugin_entry;
    return fn() == nullptr && ctx.size > 0 ? 0 : 1;
}
