/*
 * mem.c - see mem.h.
 */
#include "sim/util/mem.h"
#include "sim/util/error.h"

#include <unistd.h>

uint64_t
hs_mem_physical(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t) pages * (uint64_t) page : 0;
}

gboolean
hs_mem_fits(uint64_t need, const char *what, const char *advice, GError **error)
{
    uint64_t have = hs_mem_physical();
    /* leave a fifth for the OS, the simulator's own tables and the
     * estimate's slack */
    if (have == 0 || (double) need <= 0.8 * (double) have) {
        return TRUE;
    }
    g_set_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION,
                "%s needs about %.1f GiB, more than 80 %% of this machine's %.1f GiB; %s",
                what, (double) need / (1 << 30), (double) have / (1 << 30), advice);
    return FALSE;
}
