/*
 * test-sim-mem.c - the memory guard (sim/util/mem.h): a request is turned
 * down before it allocates, and concurrent runs (a sweep's workers) each get their share of the machine, not all of it;
 * large buffers freed are given again, zeroed.
 */
#include "sim/util/error.h"
#include "sim/util/mem.h"

#include <glib.h>
#include <string.h>

static void
test_concurrent_share(void)
{
    uint64_t have = hs_mem_physical();
    if (have == 0) {
        g_test_skip("physical memory unknown");
        return;
    }
    /* half the machine: fits one run (80 %), not each of two (40 %) */
    uint64_t need = have / 2;
    g_autoptr(GError) error = NULL;
    hs_mem_set_concurrent(1);
    g_assert_true(hs_mem_fits(need, "the check", "check fewer layers", &error));
    g_assert_no_error(error);
    hs_mem_set_concurrent(2);
    g_assert_false(hs_mem_fits(need, "the check", "check fewer layers", &error));
    g_assert_error(error, HS_USAGE_ERROR, HS_USAGE_ERROR_BAD_OPTION);
    g_assert_nonnull(strstr(error->message, "shared by 2 concurrent runs; check fewer layers "
                                            "(or fewer --jobs)"));
    g_clear_error(&error);
    /* a third of the machine still fits each of two */
    g_assert_true(hs_mem_fits(have / 3, "the check", "-", &error));
    /* and one run alone gets its 80 % back */
    hs_mem_set_concurrent(1);
    g_assert_true(hs_mem_fits(need, "the check", "-", &error));
    g_assert_false(hs_mem_fits(have, "the check", "-", &error));
    g_assert_nonnull(strstr(error->message, "more than 80 % of this machine's"));
    g_assert_null(strstr(error->message, "concurrent"));
}

/* A freed large buffer comes back, zeroed, for the next request of its
 * size; another size gets its own; small buffers are plain heap memory. */
static void
test_pool(void)
{
    const size_t big = (size_t) 3 << 20, other = (size_t) 5 << 20;
    unsigned char *a = hs_mem_alloc0(big);
    memset(a, 0xab, big);
    hs_mem_free(a, big);
    unsigned char *b = hs_mem_alloc0(big);
    g_assert_true(b == a);
    for (size_t i = 0; i < big; i += 4093) {
        g_assert_cmpuint(b[i], ==, 0);
    }
    g_assert_cmpuint(b[big - 1], ==, 0);
    hs_mem_free(b, big);
    unsigned char *c = hs_mem_alloc0(other);
    g_assert_true(c != a);
    hs_mem_free(c, other);
    /* small buffers are plain heap memory */
    char *s = hs_mem_alloc0(100);
    hs_mem_free(s, 100);
    hs_mem_free(NULL, big);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sim/mem/concurrent-share", test_concurrent_share);
    g_test_add_func("/sim/mem/pool", test_pool);
    return g_test_run();
}
