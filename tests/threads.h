/*
 * threads.h -- counting this process's threads by name, for tests that
 * check which threads a scheduler starts and joins.
 */
#ifndef VSCHED_TESTS_THREADS_H
#define VSCHED_TESTS_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The name the library gives its process-wide pager thread
 * (src/lib/pager.h). */
#define VR_PAGER_THREAD "vsched-pager"

/* Threads of this process whose name starts with `prefix` (named != 0)
 * or does not (named == 0); -1 when /proc cannot be read. A thread that
 * exits while it is counted counts as not named. */
static inline int vr_threads(const char *prefix, int named)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        int match = 0;
        if (f != NULL) {
            match = fgets(comm, sizeof comm, f) != NULL &&
                    strncmp(comm, prefix, strlen(prefix)) == 0;
            fclose(f);
        }
        n += named ? match : !match;
    }
    closedir(d);
    return n;
}

#endif
