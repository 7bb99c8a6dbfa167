/*
 * nearest.c - "did you mean": the known name a mistyped one is closest to.
 */
#include "sim/util/nearest.h"

#include <string.h>

guint
hs_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    g_autofree guint *row = g_new(guint, lb + 1);

    for (size_t j = 0; j <= lb; j++) {
        row[j] = (guint) j;
    }
    for (size_t i = 1; i <= la; i++) {
        guint diag = row[0];
        row[0] = (guint) i;
        for (size_t j = 1; j <= lb; j++) {
            guint up = row[j];
            guint sub = diag + (g_ascii_tolower(a[i - 1]) != g_ascii_tolower(b[j - 1]));
            row[j] = MIN(MIN(row[j - 1] + 1, up + 1), sub);
            diag = up;
        }
    }
    return row[lb];
}

const char *
hs_nearest(const char *name, const char *const *candidates)
{
    /* a typo is a few edits; a third of the name at most, so "x" does not
     * suggest every one-letter-off name */
    guint best = MAX(2u, (guint) strlen(name) / 3) + 1;
    const char *pick = NULL;

    for (const char *const *c = candidates; c && *c; c++) {
        guint d = hs_edit_distance(name, *c);
        if (d < best || (d > 0 && g_str_has_prefix(*c, name) && pick == NULL)) {
            best = MIN(best, d);
            pick = *c;
        }
    }
    return pick;
}
