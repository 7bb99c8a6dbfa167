/*
 * blas.c - OpenBLAS through GModule, opened on first use (see blas.h).
 *
 * The file is the one meson found (HS_OPENBLAS_LIB, from pkg-config's
 * libdir); if it is not there, the soname through the loader's search.
 * cblas.h gives the prototypes, so the pointers are typed by them.
 */
#include "engine/blas.h"

#include <gmodule.h>
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct Blas {
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(openblas_set_num_threads) *set_threads;
    __typeof__(openblas_get_corename) *corename;
    char *failure;               /* why it could not be opened, or NULL */
} Blas;

static Blas blas;

static gboolean
find(GModule *m, const char *name, gpointer *fn, GString *why)
{
    if (!g_module_symbol(m, name, fn) || *fn == NULL) {
        g_string_append_printf(why, "%s%s", why->len ? ", " : "", name);
        return FALSE;
    }
    return TRUE;
}

static void
open_blas(void)
{
    /* before its constructor reads it */
    g_setenv("OPENBLAS_NUM_THREADS", "1", FALSE);
    const char *paths[] = { HS_OPENBLAS_LIB, "libopenblas.so.0" };
    GModule *m = NULL;
    g_autofree char *first_error = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(paths) && m == NULL; i++) {
        m = g_module_open(paths[i], G_MODULE_BIND_LOCAL);
        if (m == NULL && first_error == NULL) {
            first_error = g_strdup(g_module_error());
        }
    }
    if (m == NULL) {
        blas.failure = g_strdup_printf("cannot open OpenBLAS (%s): %s", HS_OPENBLAS_LIB,
                                       first_error);
        return;
    }
    g_autoptr(GString) missing = g_string_new(NULL);
    gboolean ok = find(m, "cblas_sgemm", (gpointer *) &blas.sgemm, missing);
    ok = find(m, "openblas_set_num_threads", (gpointer *) &blas.set_threads, missing) && ok;
    ok = find(m, "openblas_get_corename", (gpointer *) &blas.corename, missing) && ok;
    if (!ok) {
        blas.failure = g_strdup_printf("%s: no %s in it", g_module_name(m), missing->str);
        return;
    }
    g_module_make_resident(m);
    /* one thread even if the user's environment asked for more: the
     * engine's own threads call it, and its rounding must not depend on
     * how many it would use */
    blas.set_threads(1);
}

void
eng_blas_need(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        open_blas();
        g_once_init_leave(&once, 1);
    }
    if (blas.failure) {
        fprintf(stderr, "hetero-sim: %s\n", blas.failure);
        exit(EXIT_FAILURE);
    }
}

void
eng_blas_sgemm_nt(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                  float *c, int ldc)
{
    eng_blas_need();
    blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
               ldc);
}

void
eng_blas_set_threads(int n)
{
    eng_blas_need();
    blas.set_threads(n);
}

const char *
eng_blas_corename(void)
{
    eng_blas_need();
    return blas.corename();
}
