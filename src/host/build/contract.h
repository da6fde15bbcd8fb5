/*
 * contract -- what an executor returns, checked by the host before it
 * uses any of it (the same rules vsched-plugin-test checks, plugin.h):
 * no NULL array behind a count, no NULL or empty name, no name holding a
 * control character; an artifact with bytes or a temporary names its
 * path, and bytes behind a length. A violation fails that file with a
 * diagnostic naming the plugin, the operation and the violation; what the
 * plugin returned is freed and the output cleared, so nothing downstream
 * (the sources record, the core's resolution) sees it.
 *
 * Thread-safety: none needed (per call, on the calling pool thread).
 */
#ifndef VSCHED_HOST_CONTRACT_H
#define VSCHED_HOST_CONTRACT_H

#include <vsched/plugin.h>

/* Check extract_deps' result for `name`. 0, or VSCHED_EINVAL with a
 * diagnostic sent through ctx and *out freed and zeroed. */
int vr_contract_deps(const char *plugin, const vsched_ctx *ctx,
                     const char *name, vsched_deps_out *out);

/* Check artifact()'s or job()'s result for `name` (`op` names which). 0,
 * or VSCHED_EINVAL with a diagnostic; the caller's failure path then
 * frees what is left in *out as for any failure. */
int vr_contract_artifact(const char *plugin, const vsched_ctx *ctx,
                         const char *op, const char *name,
                         vsched_artifact_out *out);

#endif
