/* The public headers compile as C99 with -pedantic, standing alone. */
#include <vsched/plugin.h>
#include <vsched/vsched.h>

VSCHED_PLUGIN_DEFINE(header_c99_probe)
{
    return 0;
}

int main(void)
{
    vsched_plugin p = {VSCHED_PLUGIN_ABI_MAJOR,
                       VSCHED_PLUGIN_ABI_MINOR,
                       sizeof p,
                       "probe",
                       "0",
                       "",
                       VSCHED_ROLE_EXECUTOR,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0,
                       0};
    return header_c99_probe_LTX_vsched_plugin_entry() == 0 && p.abi_major == 1
               ? 0
               : 1;
}
