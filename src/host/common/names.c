/*
 * names -- what a profile or link name may be; see names.h.
 */
#include <string.h>

#include "common/names.h"

/* Contract: see names.h. */
const char *vr_name_problem(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return "is empty";
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return "is '.' or '..'";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (*p == '/')
            return "contains '/'";
        if (*p < 0x20 || *p == 0x7f)
            return "contains a control character";
    }
    return NULL;
}
