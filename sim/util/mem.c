/*
 * mem.c - see mem.h.
 */
#include "sim/util/mem.h"
#include "sim/util/error.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint64_t
hs_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t) pages * (uint64_t) page : 0;
}

/* set once, before any run, by a sweep worker process (sweep-run.c) */
static unsigned mem_concurrent = 1;

void
hs_mem_set_concurrent(unsigned n)
{
    mem_concurrent = MAX(n, 1);
}

gboolean
hs_mem_fits(uint64_t need, const char *what, const char *advice, GError **error)
{
    uint64_t have = hs_mem_physical();
    /* leave a fifth for the OS, the simulator's own tables and the
     * estimate's slack */
    if (have == 0 || (double) need <= 0.8 * (double) have / mem_concurrent) {
        return TRUE;
    }
    if (mem_concurrent > 1) {
        g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                    "%s needs about %.1f GiB, more than 80 %% of this machine's %.1f GiB "
                    "shared by %u concurrent runs; %s (or fewer --jobs)", what,
                    (double) need / (1 << 30), (double) have / (1 << 30), mem_concurrent,
                    advice);
        return FALSE;
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "%s needs about %.1f GiB, more than 80 %% of this machine's %.1f GiB; %s",
                what, (double) need / (1 << 30), (double) have / (1 << 30), advice);
    return FALSE;
}

#define HUGE_PAGE_BYTES ((size_t) 2 << 20)

/* Freed large buffers (hs_mem_free), least recently freed at the head. */
typedef struct PoolBlock {
    void *p;
    size_t bytes;
} PoolBlock;

static GMutex pool_lock;
static GQueue pool = G_QUEUE_INIT;
static size_t pool_bytes;

/* A pooled block of exactly @bytes, taken out, or NULL. */
static void *
pool_take(size_t bytes)
{
    void *p = NULL;
    g_mutex_lock(&pool_lock);
    for (GList *l = pool.tail; l; l = l->prev) {
        PoolBlock *b = l->data;
        if (b->bytes == bytes) {
            p = b->p;
            pool_bytes -= bytes;
            g_queue_delete_link(&pool, l);
            g_free(b);
            break;
        }
    }
    g_mutex_unlock(&pool_lock);
    return p;
}

void
hs_mem_free(void *p, size_t bytes)
{
    const size_t max = (size_t) HS_MEM_POOL_MIB << 20;
    if (p == NULL) {
        return;
    }
    if (bytes < HUGE_PAGE_BYTES || bytes > max) {
        free(p);
        return;
    }
    GPtrArray *dead = g_ptr_array_new();
    g_mutex_lock(&pool_lock);
    while (pool_bytes + bytes > max) {
        PoolBlock *b = g_queue_pop_head(&pool);
        pool_bytes -= b->bytes;
        g_ptr_array_add(dead, b->p);
        g_free(b);
    }
    PoolBlock *b = g_new(PoolBlock, 1);
    *b = (PoolBlock) { p, bytes };
    g_queue_push_tail(&pool, b);
    pool_bytes += bytes;
    g_mutex_unlock(&pool_lock);
    for (guint i = 0; i < dead->len; i++) {
        free(dead->pdata[i]);
    }
    g_ptr_array_free(dead, TRUE);
}

/*
 * Zero @bytes at @p in huge-page pieces on every OpenMP thread.  For
 * fresh memory this first touch is where the kernel zeroes its pages:
 * done on one thread, it was a sixth of the default compare's CPU, all of
 * it on the main thread while the other core waited.
 */
static void
zero(void *p, size_t bytes)
{
    const size_t n = (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES;
    #pragma omp parallel for schedule(static) if (n >= 4)
    for (size_t i = 0; i < n; i++) {
        const size_t at = i * HUGE_PAGE_BYTES;
        memset((char *) p + at, 0, MIN(HUGE_PAGE_BYTES, bytes - at));
    }
}

void *
hs_mem_alloc0(size_t bytes)
{
    void *p = NULL;
    if (bytes >= HUGE_PAGE_BYTES && (p = pool_take(bytes)) != NULL) {
        zero(p, bytes);
        return p;
    }
    if (bytes < HUGE_PAGE_BYTES) {
        p = calloc(1, MAX(bytes, 1));
    } else if (posix_memalign(&p, HUGE_PAGE_BYTES, bytes) != 0) {
        p = NULL;
    } else {
#ifdef MADV_HUGEPAGE
        /* advice only: without it the buffer still works, in small pages */
        (void) madvise(p, bytes & ~(HUGE_PAGE_BYTES - 1), MADV_HUGEPAGE);
#endif
        zero(p, bytes);
    }
    if (p == NULL) {
        g_error("hs_mem_alloc0: failed to allocate %zu bytes", bytes);
    }
    return p;
}
