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

void *
hs_mem_alloc0(size_t bytes)
{
    void *p = NULL;
    if (bytes < HUGE_PAGE_BYTES) {
        p = calloc(1, MAX(bytes, 1));
    } else if (posix_memalign(&p, HUGE_PAGE_BYTES, bytes) != 0) {
        p = NULL;
    } else {
#ifdef MADV_HUGEPAGE
        /* advice only: without it the buffer still works, in small pages */
        (void) madvise(p, bytes & ~(HUGE_PAGE_BYTES - 1), MADV_HUGEPAGE);
#endif
        memset(p, 0, bytes);
    }
    if (p == NULL) {
        g_error("hs_mem_alloc0: failed to allocate %zu bytes", bytes);
    }
    return p;
}
