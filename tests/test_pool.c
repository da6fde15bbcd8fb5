/*
 * test_pool -- the bounded worker pools of libvsched.
 */
#include <pthread.h>
#include <stdatomic.h>

#include <vsched/vsched.h>

#include "cu.h"

/* A gate the test opens to let blocked tasks finish. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open;
static int started;
static atomic_int ran;
static atomic_int kind_seen;

static void blocking_task(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&gate_lock);
    started++;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    atomic_fetch_add(&ran, 1);
}

static void counting_task(void *arg)
{
    (void)arg;
    atomic_store(&kind_seen, vsched_pool_current_kind());
    atomic_fetch_add(&ran, 1);
}

static void reset_gate(void)
{
    gate_open = 0;
    started = 0;
    atomic_store(&ran, 0);
}

static void try_submit_is_full_at_capacity_and_frees_after_run(void)
{
    reset_gate();
    vsched_pool *p = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_pool_create(&p, VSCHED_POOL_CPU, 2, 8), 0);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(vsched_pool_try_submit(p, blocking_task, NULL), 0);
    /* Two running, six queued: the transport is full. */
    CU_ASSERT_EQUAL(vsched_pool_try_submit(p, blocking_task, NULL),
                    VSCHED_EFULL);
    pthread_mutex_lock(&gate_lock);
    while (started < 2)
        pthread_cond_wait(&gate_cond, &gate_lock);
    CU_ASSERT_EQUAL(started, 2); /* only the workers' two have started */
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    vsched_pool_destroy(p); /* drains the queue */
    CU_ASSERT_EQUAL(atomic_load(&ran), 8);
}

static void cpu_pool_capacity_is_floored_at_four_per_thread(void)
{
    reset_gate();
    vsched_pool *p = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_pool_create(&p, VSCHED_POOL_CPU, 1, 1), 0);
    int accepted = 0;
    while (vsched_pool_try_submit(p, blocking_task, NULL) == 0)
        accepted++;
    CU_ASSERT_EQUAL(accepted, 4);
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    vsched_pool_destroy(p);
    CU_ASSERT_EQUAL(atomic_load(&ran), 4);
}

static void worker_knows_its_pool_kind(void)
{
    reset_gate();
    vsched_pool *io = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_pool_create(&io, VSCHED_POOL_IO, 1, 0), 0);
    atomic_store(&kind_seen, -5);
    CU_ASSERT_EQUAL(vsched_pool_try_submit(io, counting_task, NULL), 0);
    vsched_pool_destroy(io);
    CU_ASSERT_EQUAL(atomic_load(&kind_seen), VSCHED_POOL_IO);
    CU_ASSERT_EQUAL(vsched_pool_current_kind(), -1);
}

static void bad_arguments_are_rejected(void)
{
    vsched_pool *p = NULL;
    CU_ASSERT_EQUAL(vsched_pool_create(&p, VSCHED_POOL_CPU, 0, 0),
                    VSCHED_EINVAL);
    CU_ASSERT_EQUAL(vsched_pool_create(NULL, VSCHED_POOL_CPU, 1, 0),
                    VSCHED_EINVAL);
    CU_ASSERT_EQUAL(vsched_pool_create(&p, (vsched_pool_kind)7, 1, 0),
                    VSCHED_EINVAL);
}

static void status_names_and_messages_come_from_one_list(void)
{
    CU_ASSERT_STRING_EQUAL(vsched_errname(VSCHED_EFULL), "VSCHED_EFULL");
    CU_ASSERT_STRING_EQUAL(vsched_strerror(VSCHED_EFULL), "queue full");
    CU_ASSERT_STRING_EQUAL(vsched_strerror(VSCHED_OK), "success");
    CU_ASSERT_STRING_EQUAL(vsched_errname(-999), "VSCHED_E?");
    CU_ASSERT_STRING_EQUAL(vsched_stage_name(VSCHED_STAGE_ANALYSIS),
                           "analysis");
}

static const vr_cu_test tests[] = {
    {"try_submit_is_full_at_capacity_and_frees_after_run",
     try_submit_is_full_at_capacity_and_frees_after_run},
    {"cpu_pool_capacity_is_floored_at_four_per_thread",
     cpu_pool_capacity_is_floored_at_four_per_thread},
    {"worker_knows_its_pool_kind", worker_knows_its_pool_kind},
    {"bad_arguments_are_rejected", bad_arguments_are_rejected},
    {"status_names_and_messages_come_from_one_list",
     status_names_and_messages_come_from_one_list},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("pool", tests);
}
