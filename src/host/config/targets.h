/*
 * targets -- the [target.NAME] sections: what a build links, read once.
 *
 * A target is one program or library made from its own objects by the
 * executor's job of its kind ("link" for an executable, "static" for an
 * archive, "shared" for a shared library; the cc plugin runs them), after
 * the targets it links with. `[batch] link = NAME` is the one-target
 * shorthand: an executable NAME over [batch] inputs, flagged `implicit`.
 *
 * Loading checks what the schema cannot (schema.c has the key table): the
 * kind, link_with naming only other targets, no cycle among them (the
 * message names the cycle), no target named like the shorthand. Every
 * message is "FILE:LINE: ..." at the offending key.
 *
 * Compile variants. A target whose objects need other compile flags than
 * the profile's (its own cflags, defines or include_dirs; -fPIC for a
 * shared library) builds them under a variant profile "PROFILE+TARGET",
 * a [profile.PROFILE+TARGET] section added to the configuration before
 * the executor is created: a copy of [profile.PROFILE] with `cflags`
 * replaced. The objects then have their own artifact keys and output
 * directory. Targets whose flags come out equal share the first one's
 * variant; a target with the profile's own flags uses the profile itself,
 * so an object needed by two targets with equal flags is compiled once.
 *
 * A vr_targets owns all it holds; read-only once loaded and varied.
 * Main thread only.
 */
#ifndef VSCHED_HOST_TARGETS_H
#define VSCHED_HOST_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

typedef enum vr_target_kind {
    VR_TARGET_EXECUTABLE,
    VR_TARGET_STATIC,
    VR_TARGET_SHARED
} vr_target_kind;

typedef struct vr_target {
    char *name;
    vr_target_kind kind;
    int implicit; /* from [batch] link */
    char **inputs, **exclude;
    size_t n_inputs, n_exclude;
    char *inputs_where; /* "FILE:LINE: " or "--set: " of inputs */
    size_t *link_with;  /* indices of the targets, in order */
    size_t n_link_with;
    uint64_t salt;   /* hash of kind, output, ldflags, libs and
                                link_with: folded into the job's key;
                                0 for the shorthand */
    char **variants; /* per profile of vr_targets.profiles: the
                                profile its objects build in */
} vr_target;

typedef struct vr_targets {
    vr_target *v;
    size_t n;
    char **profiles; /* the profiles varied (copies) */
    size_t n_profiles;
    char **extra; /* variant profile names made, in order */
    size_t n_extra;
} vr_targets;

/* Read every [target.NAME] (file order) and the [batch] link shorthand
 * (`link` NULL when unset) over `batch_inputs`. Returns 0, or
 * VSCHED_ECONFIG with *err (caller frees) and *t empty. */
int vr_targets_load(vr_targets *t, const vr_config *cfg, const char *link,
                    char *const *batch_inputs, size_t n_batch_inputs,
                    char **err);

/* Decide each target's variant for each of `profiles` and add the
 * variant sections to cfg (vr_config_set; before any plugin reads cfg).
 * `root` is the loader root (absolute), which include_dirs are under. */
void vr_targets_vary(vr_targets *t, vr_config *cfg, char *const *profiles,
                     size_t n_profiles, const char *root);

/* The profile target i's objects build in for `profile` (one of those
 * varied); `profile` itself when unknown. Borrowed. */
const char *vr_targets_variant(const vr_targets *t, size_t i,
                               const char *profile);

/* Index of the target named `name`, or -1. */
long vr_targets_find(const vr_targets *t, const char *name);

/* The executor job kind of a target kind: "link", "static", "shared". */
const char *vr_target_job_kind(vr_target_kind k);
/* "executable", "static", "shared". */
const char *vr_target_kind_name(vr_target_kind k);

/* Targets in an order where every target comes after those it links
 * with (indices, heap, t->n of them). Loading refused cycles. */
size_t *vr_targets_order(const vr_targets *t);

/* The libraries target i links, in link order: its link_with, each
 * followed by what it links in turn, every one after all that need it
 * (indices, heap, *n of them). */
size_t *vr_targets_link_line(const vr_targets *t, size_t i, size_t *n);

void vr_targets_free(vr_targets *t);

#endif
