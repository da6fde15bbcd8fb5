/*
 * keys -- what identifies an output: the hashes the incremental state
 * compares to decide whether an artifact or a job is current.
 *
 *   config(P)  the profile's effective executor configuration: every key
 *              of the executor's schema as the plugin sees it for profile
 *              P ([profile.P] over [executor] over the default, PATH keys
 *              absolute), and the loader's section (its root decides the
 *              paths the tool is given);
 *   tool(P)    the executor's identity: plugin name and version, and what
 *              its optional identity operation (ABI 1.1) says, once per
 *              run and profile;
 *   artifact   H(source name, profile, Analysis hash, config, tool): the
 *              Analysis hash folds the source's content hash and its
 *              blockers' Analysis hashes transitively, so the key covers
 *              every file reached through blockers;
 *   job        H(kind, name, profile, config, tool, each input's path and
 *              content hash in order).
 *
 * Artifact and job keys are 128-bit (XXH3-128); config and tool 64-bit.
 * Pure functions (but vr_keys_tool, which calls the plugin); thread-safe.
 */
#ifndef VSCHED_HOST_KEYS_H
#define VSCHED_HOST_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/plugin.h>

#include "config/config.h"

uint64_t vr_keys_config(const vr_config *cfg, const vsched_plugin *executor,
                        const vsched_plugin *loader, const char *profile);

/* Calls executor->identity (when its table has it) on the calling thread
 * with the host context; a failure is folded in as "identity unknown",
 * and *failed (may be NULL) set to its status, else 0. */
uint64_t vr_keys_tool(const vsched_plugin *executor, void *inst,
                      const char *profile, int *failed);

void vr_keys_artifact(uint8_t key[16], const char *name, const char *profile,
                      uint64_t analysis, uint64_t config, uint64_t tool);

void vr_keys_job(uint8_t key[16], const char *kind, const char *name,
                 const char *profile, uint64_t config, uint64_t tool,
                 const char *const *paths, const uint64_t *hashes, size_t n);

/* A key as 32 lower-case hex digits into buf (33 bytes). */
void vr_keys_hex(const uint8_t key[16], char buf[33]);

#endif
