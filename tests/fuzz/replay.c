/*
 * replay -- the gcc-built driver of a fuzz target for `make check`: runs
 * LLVMFuzzerTestOneInput once on every file of the directories (or files)
 * named on the command line, so the seed corpora and any crash found by
 * a long libFuzzer run stay regression tests without clang.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t r; buf != NULL && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    /* an exact-size copy, so ASan sees a read past the input */
    uint8_t *exact = malloc(n > 0 ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0)
                return 2;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (replay_file(path) != 0)
                return 2;
            files++;
        }
        if (d != NULL)
            closedir(d);
    }
    printf("%s: %d inputs replayed\n", argv[0], files);
    return files > 0 ? 0 : 1;
}
