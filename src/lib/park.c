/*
 * park -- the parking lot; see park.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "park.h"

#define BUCKETS 64

typedef struct bucket {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_int sleepers;
    char pad[64];
} bucket;

static bucket buckets[BUCKETS] = {
#define B                                                                     \
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,                   \
    {                                                                         \
        0                                                                     \
    }
#define B4                                                                    \
    {B}, {B}, {B},                                                            \
    {                                                                         \
        B                                                                     \
    }
#define B16 B4, B4, B4, B4
    B16, B16, B16, B16
#undef B16
#undef B4
#undef B
};

static bucket *bucket_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    return &buckets[(a >> 4 ^ a >> 12) % BUCKETS];
}

static int ready(const atomic_int *flag)
{
    return atomic_load(flag) != 0;
}

void vsched__park_until(const void *addr, const atomic_int *flag)
{
    if (ready(flag))
        return;
    bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    atomic_fetch_add(&b->sleepers, 1);
    while (!ready(flag))
        pthread_cond_wait(&b->cond, &b->lock);
    atomic_fetch_sub(&b->sleepers, 1);
    pthread_mutex_unlock(&b->lock);
}

void vsched__deadline_ms(struct timespec *at, int ms)
{
    clock_gettime(CLOCK_REALTIME, at);
    at->tv_sec += ms / 1000;
    at->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at->tv_nsec >= 1000000000L) {
        at->tv_sec++;
        at->tv_nsec -= 1000000000L;
    }
}

int vsched__park_until_ms(const void *addr, const atomic_int *flag, int ms)
{
    if (ready(flag))
        return 1;
    struct timespec until;
    vsched__deadline_ms(&until, ms);
    bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    atomic_fetch_add(&b->sleepers, 1);
    while (!ready(flag) &&
           pthread_cond_timedwait(&b->cond, &b->lock, &until) == 0)
        ;
    atomic_fetch_sub(&b->sleepers, 1);
    pthread_mutex_unlock(&b->lock);
    return ready(flag);
}

void vsched__park_wake(const void *addr)
{
    bucket *b = bucket_of(addr);
    if (atomic_load(&b->sleepers) == 0)
        return;
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

void vsched__park_set(const void *addr, atomic_int *flag)
{
    atomic_store(flag, 1);
    vsched__park_wake(addr);
}
