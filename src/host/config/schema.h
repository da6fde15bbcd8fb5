/*
 * schema -- validation of INI sections against key tables.
 *
 * The host's own sections ([vsched], [loader], [executor] plugin selection,
 * [batch], [resource.NAME]) and every plugin's section are described with
 * the same vsched_key tables of <vsched/plugin.h>, and checked by the same
 * code: unknown key (with "did you mean KEY?" when one is close), bad type,
 * out of range, missing required key.
 */
#ifndef VSCHED_HOST_SCHEMA_H
#define VSCHED_HOST_SCHEMA_H

#include <stddef.h>
#include <vsched/plugin.h>

#include "config/config.h"

/* Check every key of `section` in cfg against schema[0..n). Keys named in
 * `ignore` (NULL-terminated, may be NULL) are accepted as they are (e.g.
 * "plugin" in [loader]). When per_profile is non-zero only keys flagged
 * VSCHED_KEY_PER_PROFILE are accepted. Returns 0, or VSCHED_ECONFIG with
 * *err = "FILE:LINE: message" (caller frees). */
int vr_schema_validate(const vr_config *cfg, const char *section,
                       const vsched_key *schema, size_t n,
                       const char *const *ignore, int per_profile, char **err);

/* Validate the whole file: only known sections (vsched, loader, executor,
 * batch, cache, profile.NAME, resource.NAME, target.NAME; "did you mean"
 * when close; [batch] inputs optional when there is a target),
 * and the
 * host's own sections' keys. Plugin sections are validated later, once the
 * plugins are loaded. */
int vr_schema_validate_host(const vr_config *cfg, char **err);

/* Where section.key is set, as a message prefix (heap string, caller
 * frees): "FILE:LINE: " (key NULL: the section header's line), "FILE: "
 * without a line, or "--set: " for a value or section made on the
 * command line. */
char *vr_schema_where(const vr_config *cfg, const char *section,
                      const char *key);

/* Typed reads of a validated value (after validation they cannot fail;
 * a missing key yields the schema default). */
long long vr_schema_int(const vr_config *cfg, const char *section,
                        const char *key, long long dflt);
int vr_schema_bool(const char *value);
/* Parse a whole decimal integer (optional sign, digits, nothing else):
 * 0 with *v set, 1 out of long long's range, -1 not an integer. */
int vr_schema_parse_int(const char *s, long long *v);

/* Key tables of the host's sections. */
extern const vsched_key vr_schema_vsched[];
extern const size_t vr_schema_vsched_n;
extern const vsched_key vr_schema_executor[]; /* host keys of [executor] */
extern const size_t vr_schema_executor_n;
extern const vsched_key vr_schema_batch[];
extern const size_t vr_schema_batch_n;
extern const vsched_key vr_schema_cache[];
extern const size_t vr_schema_cache_n;
extern const vsched_key vr_schema_watch[];
extern const size_t vr_schema_watch_n;
extern const vsched_key vr_schema_resource[];
extern const size_t vr_schema_resource_n;
extern const vsched_key vr_schema_target[];
extern const size_t vr_schema_target_n;

/* Edit distance, for "did you mean". */
size_t vr_schema_distance(const char *a, const char *b);

#endif
