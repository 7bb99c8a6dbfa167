/*
 * wcache.h - encoded weight matrices shared within a process, bounded.
 *
 * A matrix is made (values generated, encoded in its format) once and
 * shared by everything that asks for the same values in the same format:
 * the policies of a compare, the rows of a validate, the models of a
 * test.  An entry is named by what its values are, never by who asked:
 * (content, rows, cols, format), where content is a synthetic tensor's
 * key (weights.h: its values are a pure function of key, rows and cols).
 * So a hit gives exactly the bits a make would, on any thread count, and
 * results cannot depend on what was cached.
 *
 * A matrix in use (acquired, not yet released) is never dropped.  Those
 * released stay, most recently used last, while every matrix held (in
 * use or not) takes at most the budget; beyond it the least recently
 * used are freed.  The budget is HS_WEIGHT_CACHE_MB (MiB, read once;
 * default ENG_WCACHE_DEFAULT_MB); 0 turns sharing off: every acquire
 * makes its own matrix and a release frees it.
 *
 * Thread safety: every call may come from any thread.  Two threads asking
 * for the same missing entry make it once (the second waits for it).
 */
#ifndef ENG_WCACHE_H
#define ENG_WCACHE_H

#include <glib.h>
#include <stdint.h>

/*
 * 512 MiB (assumed): the default compare's check holds 549 MB of weights
 * in use during its first run anyway (Llama-3-8B's first layer in W4A16,
 * 113 MB, and its FP16 copy for the FP reference, 436 MB), and each later
 * policy's format of that layer is 60-230 MB: the bound keeps the
 * weights held at about what the first run needs, so the whole command
 * stays under 1 GB, while a few released formats of a small model (or
 * one of a large model's layers) stay for the next run that asks.
 */
#define ENG_WCACHE_DEFAULT_MB 512

/* Formats an entry can be in: a model's own storage (EngWFormat) or
 * another (EngQFormat), in one number space. */
#define ENG_WCACHE_BASE(wfmt) ((uint32_t) (wfmt))
#define ENG_WCACHE_Q(qfmt) (0x100u | (uint32_t) (qfmt))

typedef struct EngWCacheKey {
    uint64_t content;            /* what the values are (eng_syn_key) */
    uint32_t rows, cols;
    uint32_t format;             /* ENG_WCACHE_BASE() or ENG_WCACHE_Q() */
} EngWCacheKey;

/* Makes the matrix of @key (transfer full), its size in *bytes. */
typedef gpointer (*EngWCacheMake)(const EngWCacheKey *key, gpointer opaque, size_t *bytes);

/*
 * The matrix of @key, made by @make(@key, @opaque) if no entry holds it,
 * in use until eng_wcache_release().  @key NULL: a matrix that is nobody
 * else's (loaded values), made and never shared.  @destroy frees it.
 * (transfer none: valid until released)
 */
gpointer eng_wcache_acquire(const EngWCacheKey *key, EngWCacheMake make, gpointer opaque,
                            GDestroyNotify destroy);
/* @obj, already made, as the entry of @key (NULL: private), in use; if the entry exists
 * (made meanwhile), @obj is destroyed and the entry's matrix returned.
 * (takes @obj over; transfer none: valid until released) */
gpointer eng_wcache_offer(const EngWCacheKey *key, gpointer obj, size_t bytes,
                          GDestroyNotify destroy);
/* Whether an entry of @key exists (made or being made). */
gboolean eng_wcache_has(const EngWCacheKey *key);
/* One use of @obj (from acquire or offer) ends.  NULL is a no-op. */
void eng_wcache_release(gconstpointer obj);

typedef struct EngWCacheStats {
    uint64_t hits;               /* acquires (and offers) that found the entry */
    uint64_t misses;             /* matrices made (sharing off: every acquire) */
    uint64_t evictions;          /* released entries freed to keep the budget */
    uint64_t bytes;              /* held now, in use or not */
    uint64_t in_use_bytes;       /* held now by acquires not released */
    uint64_t peak_bytes;         /* most held at once */
    uint64_t budget_bytes;       /* 0: sharing off */
} EngWCacheStats;

void eng_wcache_stats(EngWCacheStats *out);

/*
 * The budget from HS_WEIGHT_CACHE_MB (unset: the default), checked: a
 * whole number of MiB from 0 to 1048576, else FALSE with
 * "HS_WEIGHT_CACHE_MB: expected ... (got ...)".  Called by the CLI
 * before anything runs; if never called, the first acquire reads the
 * variable (a bad value then means the default).
 */
gboolean eng_wcache_init(GError **error);
/* Sets the budget (tests): entries released beyond it are freed now;
 * 0 also stops sharing for later acquires. */
void eng_wcache_set_budget(uint64_t bytes);

#endif /* ENG_WCACHE_H */
