/*
 * error -- the one status-code list of vsched (VSCHED_ERROR_LIST in
 * <vsched/plugin.h>), its messages and names.
 */
#include <vsched/vsched.h>

const char *vsched_version(void)
{
    return VSCHED_VERSION_STRING;
}

const char *vsched_strerror(int status)
{
    switch (status) {
    case VSCHED_OK: return "success";
#define VSCHED__MSG(name, value, msg)                                         \
    case value: return msg;
        VSCHED_ERROR_LIST(VSCHED__MSG)
#undef VSCHED__MSG
    default: return "unknown status";
    }
}

const char *vsched_errname(int status)
{
    switch (status) {
    case VSCHED_OK: return "VSCHED_OK";
#define VSCHED__NAME(name, value, msg)                                        \
    case value: return "VSCHED_E" #name;
        VSCHED_ERROR_LIST(VSCHED__NAME)
#undef VSCHED__NAME
    default: return "VSCHED_E?";
    }
}

const char *vsched_stage_name(vsched_stage stage)
{
    switch (stage) {
    case VSCHED_STAGE_SOURCE: return "source";
    case VSCHED_STAGE_ANALYSIS: return "analysis";
    case VSCHED_STAGE_ARTIFACT: return "artifact";
    }
    return "?";
}
