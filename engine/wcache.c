/*
 * wcache.c - see wcache.h.
 */
#include "engine/wcache.h"
#include "sim/util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct Entry {
    EngWCacheKey key;
    gboolean shared;             /* in the table by key (FALSE: private) */
    gboolean ready;              /* made (obj set) */
    gpointer obj;
    size_t bytes;
    GDestroyNotify destroy;
    guint uses;
    GList lru;                   /* in Cache.lru while uses == 0; data = the entry */
} Entry;

typedef struct Cache {
    GMutex lock;
    GCond made;                  /* an entry became ready */
    GHashTable *by_key;          /* EngWCacheKey* -> Entry* (shared entries) */
    GHashTable *by_obj;          /* obj -> Entry* (every ready entry) */
    GQueue lru;                  /* released shared entries, least recent at head */
    gboolean configured;
    EngWCacheStats st;
} Cache;

static Cache cache;

static guint
key_hash(gconstpointer p)
{
    const EngWCacheKey *k = p;
    uint64_t h = k->content ^ ((uint64_t) k->rows << 32 | k->cols) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t) k->format * 0xBF58476D1CE4E5B9ull;
    return (guint) (h ^ (h >> 32));
}

static gboolean
key_equal(gconstpointer a, gconstpointer b)
{
    const EngWCacheKey *x = a, *y = b;
    return x->content == y->content && x->rows == y->rows && x->cols == y->cols &&
           x->format == y->format;
}

/* HS_WEIGHT_CACHE_MB as bytes; FALSE (and the error) if it is not a
 * whole number of MiB in range. */
static gboolean
budget_from_env(uint64_t *bytes, GError **error)
{
    const char *s = g_getenv("HS_WEIGHT_CACHE_MB");
    *bytes = (uint64_t) ENG_WCACHE_DEFAULT_MB << 20;
    if (s == NULL) {
        return TRUE;
    }
    char *end = NULL;
    errno = 0;
    guint64 mb = g_ascii_strtoull(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || !g_ascii_isdigit(*s) || mb > (1u << 20)) {
        g_set_error(error, HS_CONFIG_ERROR, HS_CONFIG_ERROR_BAD_VALUE,
                    "HS_WEIGHT_CACHE_MB: expected a whole number of MiB from 0 (no sharing) "
                    "to 1048576 (got '%s')", s);
        return FALSE;
    }
    *bytes = (uint64_t) mb << 20;
    return TRUE;
}

/* Under the lock: the tables made and the budget read. */
static void
ensure(void)
{
    if (cache.by_key == NULL) {
        cache.by_key = g_hash_table_new(key_hash, key_equal);
        cache.by_obj = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    if (!cache.configured) {
        uint64_t b;
        if (!budget_from_env(&b, NULL)) {
            b = (uint64_t) ENG_WCACHE_DEFAULT_MB << 20;
        }
        cache.st.budget_bytes = b;
        cache.configured = TRUE;
    }
}

/* Under the lock: forget @e (its matrix is returned to the caller, who
 * destroys it after unlocking). */
static void
forget(Entry *e)
{
    if (e->shared) {
        g_hash_table_remove(cache.by_key, &e->key);
    }
    if (e->ready) {
        g_hash_table_remove(cache.by_obj, e->obj);
    }
    cache.st.bytes -= e->bytes;
}

/* Under the lock: the released entries beyond the budget, least recent
 * first, taken out (into @dead, destroyed by the caller unlocked). */
static void
evict(GPtrArray *dead)
{
    while (cache.st.bytes > cache.st.budget_bytes && cache.lru.head) {
        Entry *e = cache.lru.head->data;
        g_queue_unlink(&cache.lru, &e->lru);
        forget(e);
        cache.st.evictions++;
        g_ptr_array_add(dead, e);
    }
}

static void
destroy_all(GPtrArray *dead)
{
    for (guint i = 0; i < dead->len; i++) {
        Entry *e = dead->pdata[i];
        e->destroy(e->obj);
        g_free(e);
    }
    g_ptr_array_free(dead, TRUE);
}

/* Under the lock: @e holds @obj now, in use. */
static void
set_ready(Entry *e, gpointer obj, size_t bytes)
{
    e->obj = obj;
    e->bytes = bytes;
    e->ready = TRUE;
    g_hash_table_insert(cache.by_obj, obj, e);
    cache.st.bytes += bytes;
    cache.st.in_use_bytes += bytes;
    cache.st.peak_bytes = MAX(cache.st.peak_bytes, cache.st.bytes);
    g_cond_broadcast(&cache.made);
}

/* Under the lock: one more use of @e (a hit), once it is made. */
static gpointer
use(Entry *e)
{
    if (e->uses++ == 0 && e->ready) {
        g_queue_unlink(&cache.lru, &e->lru);
        cache.st.in_use_bytes += e->bytes;
    }
    cache.st.hits++;
    while (!e->ready) {
        g_cond_wait(&cache.made, &cache.lock);
    }
    return e->obj;
}

static Entry *
entry_new(const EngWCacheKey *key, GDestroyNotify destroy)
{
    Entry *e = g_new0(Entry, 1);
    if (key) {
        e->key = *key;
        e->shared = TRUE;
        g_hash_table_insert(cache.by_key, &e->key, e);
    }
    e->destroy = destroy;
    e->uses = 1;
    e->lru.data = e;
    return e;
}

gpointer
eng_wcache_acquire(const EngWCacheKey *key, EngWCacheMake make, gpointer opaque,
                   GDestroyNotify destroy)
{
    g_mutex_lock(&cache.lock);
    ensure();
    gboolean share = key != NULL && cache.st.budget_bytes > 0;
    Entry *e = share ? g_hash_table_lookup(cache.by_key, key) : NULL;
    if (e) {
        gpointer obj = use(e);
        g_mutex_unlock(&cache.lock);
        return obj;
    }
    e = entry_new(share ? key : NULL, destroy);
    cache.st.misses++;
    g_mutex_unlock(&cache.lock);

    /* made outside the lock: it takes seconds, and other entries may be
     * asked for meanwhile */
    size_t bytes = 0;
    gpointer obj = make(key, opaque, &bytes);
    g_assert(obj != NULL);

    GPtrArray *dead = g_ptr_array_new();
    g_mutex_lock(&cache.lock);
    set_ready(e, obj, bytes);
    evict(dead);
    g_mutex_unlock(&cache.lock);
    destroy_all(dead);
    return obj;
}

gpointer
eng_wcache_offer(const EngWCacheKey *key, gpointer obj, size_t bytes, GDestroyNotify destroy)
{
    g_mutex_lock(&cache.lock);
    ensure();
    gboolean share = key != NULL && cache.st.budget_bytes > 0;
    Entry *e = share ? g_hash_table_lookup(cache.by_key, key) : NULL;
    if (e) {
        gpointer held = use(e);
        g_mutex_unlock(&cache.lock);
        destroy(obj);
        return held;
    }
    e = entry_new(share ? key : NULL, destroy);
    GPtrArray *dead = g_ptr_array_new();
    set_ready(e, obj, bytes);
    evict(dead);
    g_mutex_unlock(&cache.lock);
    destroy_all(dead);
    return obj;
}

gboolean
eng_wcache_has(const EngWCacheKey *key)
{
    g_mutex_lock(&cache.lock);
    ensure();
    gboolean has = g_hash_table_lookup(cache.by_key, key) != NULL;
    g_mutex_unlock(&cache.lock);
    return has;
}

void
eng_wcache_release(gconstpointer obj)
{
    if (obj == NULL) {
        return;
    }
    GPtrArray *dead = g_ptr_array_new();
    g_mutex_lock(&cache.lock);
    Entry *e = g_hash_table_lookup(cache.by_obj, obj);
    g_assert(e != NULL && e->uses > 0);
    if (--e->uses == 0) {
        cache.st.in_use_bytes -= e->bytes;
        if (e->shared) {
            g_queue_push_tail_link(&cache.lru, &e->lru);
        } else {
            forget(e);
            g_ptr_array_add(dead, e);
        }
        evict(dead);
    }
    g_mutex_unlock(&cache.lock);
    destroy_all(dead);
}

void
eng_wcache_stats(EngWCacheStats *out)
{
    g_mutex_lock(&cache.lock);
    ensure();
    *out = cache.st;
    g_mutex_unlock(&cache.lock);
}

gboolean
eng_wcache_init(GError **error)
{
    uint64_t b;
    if (!budget_from_env(&b, error)) {
        return FALSE;
    }
    eng_wcache_set_budget(b);
    return TRUE;
}

void
eng_wcache_set_budget(uint64_t bytes)
{
    GPtrArray *dead = g_ptr_array_new();
    g_mutex_lock(&cache.lock);
    ensure();
    cache.st.budget_bytes = bytes;
    evict(dead);
    if (bytes == 0) {
        /* entries in use stop being shared: later acquires make their own */
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, cache.by_key);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            ((Entry *) v)->shared = FALSE;
            g_hash_table_iter_remove(&it);
        }
    }
    g_mutex_unlock(&cache.lock);
    destroy_all(dead);
}
