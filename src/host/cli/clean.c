/*
 * clean -- --clean; see clean.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "cli/clean.h"
#include "common/escape.h"
#include "common/util.h"
#include "state/cache.h"
#include "state/journal.h"
#include "state/lock.h"
#include "state/state.h"

/* One recorded output removed (vr_output_remove); 1 when it was. The
 * temporaries a killed run left beside it are not looked for: the
 * executor's sweep, which knows their exact names, removes them when the
 * next build starts writing. */
static size_t vr_clean_output(const vr_build *b, const char *out_real,
                              const char *path)
{
    char *at = vr_output_remove(out_real, path, b->err, b->cli->verbosity < 0);
    size_t removed = at != NULL;
    free(at);
    return removed;
}

/* Contract: see clean.h. */
int vr_clean_run(const vr_build *b)
{
    const char *state_dir = b->settings->state_dir;
    const char *cache_dir = b->settings->cache_dir;
    char *msg = NULL;
    vr_lock *lock = NULL;
    vr_state *st = NULL;
    vr_snapshot snap;
    int status = VR_EXIT_USAGE;
    if (vr_lock_take(&lock, state_dir, !b->cli->no_wait,
                     b->cli->verbosity < 0 ? NULL : b->err,
                     &msg) != VSCHED_OK ||
        vr_journal_check(state_dir, 1, &msg) != VSCHED_OK ||
        vr_state_open(&st, state_dir, 0, &snap, b->err, &msg) != VSCHED_OK)
        goto out;
    /* outputs a killed run published without recording them first (those
     * a record vouches for go with the records, below) */
    const char *out_dir = b->settings->out_dir;
    size_t removed = vr_journal_settle(state_dir, out_dir, &snap, b->out,
                                       b->err, b->cli->verbosity < 0);
    char *out_real = out_dir != NULL ? realpath(out_dir, NULL) : NULL;
    for (size_t i = 0; i < snap.n_art; i++)
        if (snap.art[i].out_path != NULL)
            removed += vr_clean_output(b, out_real, snap.art[i].out_path);
    for (size_t i = 0; i < snap.n_job; i++)
        if (snap.job[i].out_path != NULL)
            removed += vr_clean_output(b, out_real, snap.job[i].out_path);
    free(out_real);
    vr_snapshot_free(&snap);
    vr_state_close(st);
    st = NULL;
    if (vr_state_remove(state_dir, &msg) != VSCHED_OK ||
        vr_journal_remove(state_dir, &msg) != VSCHED_OK)
        goto out;
    if (b->cli->clean_cache) {
        /* the cache of [cache] dir, or the default one when it is off */
        char *dir = cache_dir != NULL ? vr_xstrdup(cache_dir)
                                      : vr_path_join(state_dir, "cache");
        int rc = vr_cache_remove_dir(dir, &msg);
        if (rc == VSCHED_OK && b->cli->verbosity >= 0) {
            fputs("vsched-run: removed the cache ", b->out);
            vr_put_name(b->out, dir);
            fputc('\n', b->out);
        }
        free(dir);
        if (rc != VSCHED_OK)
            goto out;
    }
    if (b->cli->verbosity >= 0)
        fprintf(b->out, "vsched-run: removed %zu output%s and the state in ",
                removed, removed == 1 ? "" : "s");
    vr_put_name(b->out, state_dir);
    fputc('\n', b->out);
    status = VR_EXIT_OK;
out:
    if (msg != NULL)
        fprintf(b->err, "vsched-run: %s\n", msg);
    free(msg);
    vr_state_close(st);
    vr_lock_release(lock);
    return status;
}
