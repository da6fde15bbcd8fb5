/*
 * remote -- the `remote` resource of distcc compiles; see remote.h.
 */
#include <stdlib.h>
#include <string.h>

#include "../../../plugins/cc/hosts.h"
#include "build/remote.h"
#include "common/util.h"

/* 1 when the executor's schema declares `key`. */
static int executor_has_key(const vr_build *b, const char *key)
{
    const vsched_plugin *d = b->executor_desc;
    for (size_t i = 0; d != NULL && i < d->n_schema; i++)
        if (strcmp(d->schema[i].name, key) == 0)
            return 1;
    return 0;
}

/* 1 when the launcher value names distcc. */
static int launcher_is_remote(const char *v)
{
    for (const char *p = v != NULL ? v : ""; *p != '\0';) {
        size_t n = strcspn(p, " \t\r\n");
        const char *w = p;
        for (size_t i = 0; i < n; i++)
            if (p[i] == '/')
                w = p + i + 1;
        if (p + n - w == 6 && memcmp(w, "distcc", 6) == 0)
            return 1;
        p += n;
        p += strspn(p, " \t\r\n");
    }
    return 0;
}

/* [resource.remote] capacity when the section exists, else 0. */
static unsigned configured_capacity(const vr_build *b)
{
    const vr_settings *s = b->settings;
    for (size_t i = 0; i < s->n_resources; i++)
        if (strcmp(s->resources[i].name, "remote") == 0)
            return s->resources[i].capacity;
    return 0;
}

/* The slots of the executor's host list into *slots; 0 or -1 (printed). */
static int host_slots(const vr_build *b, unsigned *slots)
{
    char why[1024];
    cc_hosts_src src;
    const char *given = vr_config_get(b->cfg, "executor", "distcc_hosts");
    int found = cc__hosts_find(given, NULL, &src, why, sizeof why);
    if (found <= 0) {
        fprintf(b->err, "vsched-run: [executor] launcher distcc: %s\n",
                found < 0 ? why
                          : "no distcc hosts: set distcc_hosts, "
                            "DISTCC_HOSTS or ~/.distcc/hosts");
        return -1;
    }
    cc_hosts h;
    int rc = cc__hosts_parse(src.text, &h, why, sizeof why);
    if (rc != 0)
        fprintf(b->err, "vsched-run: %s: %s\n", src.origin, why);
    else if (h.zeroconf)
        fprintf(b->err,
                "vsched-run: %s: +zeroconf does not say how many compiles "
                "the hosts take: set [resource.remote] capacity\n",
                src.origin);
    free(src.text);
    if (rc != 0 || h.zeroconf)
        return -1;
    *slots = h.slots > 1000000 ? 1000000 : (unsigned)h.slots;
    return 0;
}

/* Contract: see remote.h. */
int vr_remote_wire(vsched *s, const vr_build *b)
{
    if (!executor_has_key(b, "launcher") ||
        !launcher_is_remote(vr_config_get(b->cfg, "executor", "launcher")))
        return 0;
    unsigned cap = configured_capacity(b);
    if (cap == 0 && host_slots(b, &cap) != 0)
        return -1;
    static const char *const names[] = {"remote"};
    if (vsched_set_resource_capacity(s, "remote", cap) != 0 ||
        vsched_set_stage_resources(s, VSCHED_STAGE_ARTIFACT, NULL, names, 1) !=
            0) {
        fprintf(b->err, "vsched-run: cannot set up the remote resource\n");
        return -1;
    }
    return 0;
}

/* Contract: see remote.h. */
char *vr_remote_resource_lines(vsched *s)
{
    size_t n = vsched_resource_names(s, NULL, 0);
    const char **names = vr_xcalloc(n + 1, sizeof *names);
    size_t got = vsched_resource_names(s, names, n);
    n = got < n ? got : n;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    for (size_t i = 0; f != NULL && i < n; i++) {
        vsched_resource_stats st;
        if (vsched_resource_info(s, names[i], &st) == 0)
            fprintf(f, "stats: resource %s capacity=%u peak=%u in_use=%u\n",
                    names[i], st.capacity, st.peak, st.in_use);
    }
    if (f != NULL)
        fclose(f);
    free(names);
    return text != NULL ? text : vr_xstrdup("");
}
