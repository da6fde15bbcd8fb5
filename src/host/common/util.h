/*
 * util -- small host helpers: checked allocation, formatted strings,
 * paths.
 */
#ifndef VSCHED_HOST_UTIL_H
#define VSCHED_HOST_UTIL_H

#include <stddef.h>

#if defined(__GNUC__)
#define VR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VR_PRINTF(f, a)
#endif

/* malloc/strdup that abort with a message on exhaustion (the host has no
 * way to continue without memory). */
void *vr_xmalloc(size_t n);
void *vr_xcalloc(size_t n, size_t size);
void *vr_xrealloc(void *p, size_t n);
char *vr_xstrdup(const char *s);
/* Room for element n of an array of n elements of `size` bytes that was
 * empty (NULL, n 0) and has only ever grown through this function, one
 * element at a time (n may shrink meanwhile): its capacity is the power
 * of two at or above n, doubled when n reaches it, so a push costs O(1)
 * amortised (a realloc per element made loading a large state quadratic
 * where realloc cannot grow in place). Aborts on exhaustion. */
void *vr_xgrow(void *v, size_t n, size_t size);
/* asprintf into a fresh heap string; aborts on exhaustion. */
char *vr_strfmt(const char *fmt, ...) VR_PRINTF(1, 2);

/* `path` made absolute against `dir` (unless already absolute) and
 * lexically normalised ("." and ".." and "//" removed). Heap string. */
char *vr_path_join(const char *dir, const char *path);
/* Copy src to the new file dst (mode of src): a reflink where the file
 * system can, else copy_file_range, else read/write. 0 or -1 (errno set;
 * no dst left behind). */
int vr_file_copy(const char *src, const char *dst);
/* Directory part of an absolute or relative path, made absolute. */
char *vr_path_dirname_abs(const char *path);
/* Where `path` is when it names an entry inside the directory `dir_real`
 * (a realpath(3) result): its parent, resolved as the kernel resolves it
 * (every symbolic link, then each "..", in order: "out/x/../f" with x a
 * link leaves through x), is dir_real or below it, and its last component
 * is a plain name. Returns that resolved path (heap), which is what the
 * caller stats and removes, or NULL (also when the parent does not
 * exist). errno is then ENOENT for a parent that does not exist (nor
 * does the file), EXDEV for a name outside. What the host removes as an
 * output passes this against the output directory. */
char *vr_path_resolve_inside(const char *dir_real, const char *path);

#endif
