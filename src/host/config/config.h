/*
 * config -- the INI configuration of vsched-run, read through inih.
 *
 * A vr_config holds every (section, key, value) of one INI file with the
 * line it came from, plus --set overrides. It knows nothing of which keys
 * are valid: schema.h validates sections against key tables.
 *
 * Error messages are one line, "FILE:LINE: message" (LINE omitted when no
 * line applies), heap-allocated, owned by the caller (free()).
 *
 * Not thread-safe; built and read on the main thread, then read-only.
 */
#ifndef VSCHED_HOST_CONFIG_H
#define VSCHED_HOST_CONFIG_H

#include <stddef.h>

/* Longest accepted INI line in bytes, excluding the newline. Longer lines
 * are an error, never truncated. */
#define VR_CONFIG_MAX_LINE 4096

typedef struct vr_config vr_config;

/* One key of a section, in file order. */
typedef struct vr_config_entry {
    const char *section;
    const char *key;
    const char *value;
    unsigned line; /* 0 for a --set override of a key not in the file */
} vr_config_entry;

/* Read `path`. Errors (all VSCHED_ECONFIG, *err set): unreadable file,
 * syntax error, over-long line, duplicate key in one section, duplicate
 * section header, key outside any section. Returns 0 or a negative
 * vsched_status. */
int vr_config_load(vr_config **out, const char *path, char **err);

/* Parse INI text held in memory; `name` stands for the file in messages and
 * `dir` is the directory relative paths resolve against. For tests. */
int vr_config_load_string(vr_config **out, const char *text, const char *name,
                          const char *dir, char **err);

void vr_config_free(vr_config *cfg);

/* Apply "SECTION.KEY=VALUE" (SECTION may contain dots: the key is after the
 * last dot before '='). Replaces an existing value or adds the key.
 * VSCHED_EINVAL with *err ("--set: expected SECTION.KEY=VALUE, got ...")
 * when malformed. */
int vr_config_set(vr_config *cfg, const char *assignment, char **err);

/* Value of section.key or NULL. */
const char *vr_config_get(const vr_config *cfg, const char *section,
                          const char *key);
/* Line of section.key, or of the section header when key is NULL; 0 when
 * unknown. */
unsigned vr_config_line(const vr_config *cfg, const char *section,
                        const char *key);
/* 1 when the section appears (header in the file or a --set). */
int vr_config_has_section(const vr_config *cfg, const char *section);
/* 1 when the current value of section.key came from vr_config_set (so a
 * message about it should say "--set", not point at the file's line). */
int vr_config_from_set(const vr_config *cfg, const char *section,
                       const char *key);

/* Entries in file order (overrides last); *n receives the count. The array
 * is owned by cfg. */
const vr_config_entry *vr_config_entries(const vr_config *cfg, size_t *n);
/* Section names in file order; owned by cfg. */
const char *const *vr_config_sections(const vr_config *cfg, size_t *n);
/* Indices into vr_config_entries() of the keys of one section, in order
 * (--set additions last); NULL with *n = 0 when the section is absent.
 * Owned by cfg; valid until the next vr_config_set. */
const size_t *vr_config_section_entries(const vr_config *cfg,
                                        const char *section, size_t *n);

/* The file as given, and its directory (absolute). */
const char *vr_config_path(const vr_config *cfg);
const char *vr_config_dir(const vr_config *cfg);

#endif
