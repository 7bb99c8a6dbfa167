/*
 * nearest.h - "did you mean": the known name a mistyped one is closest to,
 * for every message about an unknown name (a command, an option, a SoC,
 * a sweep spec's setting).
 */
#ifndef HS_NEAREST_H
#define HS_NEAREST_H

#include <glib.h>

/* Levenshtein distance, ASCII case folded. */
guint hs_edit_distance(const char *a, const char *b);

/* The candidate @name is most likely a typo of (a few edits away), or
 * NULL.  @candidates is NULL-terminated. */
const char *hs_nearest(const char *name, const char *const *candidates);

#endif
