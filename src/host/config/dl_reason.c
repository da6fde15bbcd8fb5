/*
 * dl_reason -- why a module file cannot be loaded, in the dynamic
 * loader's own words. libltdl reports every failed open of a file that
 * exists as "file not found"; dlopen(3) of the shared object itself says
 * what is wrong ("file too short", "libfoo.so.1: cannot open shared object
 * file", "undefined symbol: x").
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "config/plugin_host_int.h"

/* The shared object a libtool archive names (dlname='...'), found beside
 * it or in its .libs directory (an uninstalled build); heap or NULL. */
static char *vr_la_shared_object(const char *la)
{
    FILE *f = fopen(la, "re");
    if (f == NULL)
        return NULL;
    char line[1024], dlname[512] = "";
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "dlname='%511[^']'", dlname) == 1)
            break;
    fclose(f);
    if (dlname[0] == '\0')
        return NULL;
    const char *slash = strrchr(la, '/');
    int dir = slash != NULL ? (int)(slash - la) : 1;
    const char *d = slash != NULL ? la : ".";
    char *so = vr_strfmt("%.*s/.libs/%s", dir, d, dlname);
    if (access(so, F_OK) == 0)
        return so;
    free(so);
    so = vr_strfmt("%.*s/%s", dir, d, dlname);
    if (access(so, F_OK) == 0)
        return so;
    free(so);
    return NULL;
}

/* Contract: see plugin_host_int.h. Called with vr_plugin_lock held (dlerror
 * state is per thread, but libltdl's is not). */
char *vr__dl_reason(const char *file)
{
    char *so = vr__has_suffix(file, ".la") ? vr_la_shared_object(file)
                                           : vr_xstrdup(file);
    if (so == NULL)
        return vr__has_suffix(file, ".la")
                   ? vr_strfmt("%s is not a libtool archive naming a shared "
                               "object (no dlname, or its file is missing)",
                               file)
                   : NULL;
    (void)dlerror();
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    char *why = NULL;
    if (h == NULL) {
        const char *e = dlerror();
        why = e != NULL ? vr_xstrdup(e) : NULL;
    } else {
        dlclose(h);
    }
    free(so);
    return why;
}
