/*
 * trace-merge.c - see trace-merge.h.
 */
#include "sim/cli/trace-merge.h"
#include "sim/util/json.h"
#include "sim/util/outfile.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Tracks of one old process become threads old_pid * TID_STRIDE + old_tid
 * (a processor has far fewer lanes than this). */
#define TID_STRIDE 10000
/* Flow ids of run i are i * FLOW_STRIDE + the run's own (fewer than this
 * syncs in a run). */
#define FLOW_STRIDE 1000000000.0

typedef struct Event {
    uint64_t ts_ns;
    uint32_t run;
    uint32_t seq;
    char *text;
} Event;

struct HsTraceMerge {
    GArray *events;            /* of Event */
    uint32_t runs;
    cJSON *other;              /* the first run's otherData, "policies" added */
};

HsTraceMerge *
hs_trace_merge_new(void)
{
    HsTraceMerge *m = g_new0(HsTraceMerge, 1);
    m->events = g_array_new(FALSE, FALSE, sizeof(Event));
    return m;
}

void
hs_trace_merge_free(HsTraceMerge *m)
{
    if (m == NULL) {
        return;
    }
    for (guint i = 0; i < m->events->len; i++) {
        g_free(g_array_index(m->events, Event, i).text);
    }
    g_array_free(m->events, TRUE);
    cJSON_Delete(m->other);
    g_free(m);
}

static void
add_event(HsTraceMerge *m, uint64_t ts_ns, cJSON *e)
{
    Event ev = { ts_ns, m->runs, m->events->len, cJSON_PrintUnformatted(e) };
    g_array_append_val(m->events, ev);
}

static void
add_meta(HsTraceMerge *m, const char *what, uint32_t pid, int64_t tid, const char *key,
         cJSON *value)
{
    g_autoptr(cJSON) e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", what);
    cJSON_AddStringToObject(e, "ph", "M");
    cJSON_AddNumberToObject(e, "pid", pid);
    if (tid >= 0) {
        cJSON_AddNumberToObject(e, "tid", (double) tid);
    }
    cJSON_AddItemToObject(cJSON_AddObjectToObject(e, "args"), key, value);
    add_event(m, 0, e);
}

static double
num(const cJSON *e, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

void
hs_trace_merge_add(HsTraceMerge *m, const char *name, const char *trace)
{
    g_autoptr(cJSON) root = cJSON_Parse(trace);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    g_assert(cJSON_IsArray(events));
    uint32_t pid = m->runs + 1;
    add_meta(m, "process_name", pid, -1, "name", cJSON_CreateString(name));
    add_meta(m, "process_sort_index", pid, -1, "sort_index", cJSON_CreateNumber(pid));

    /* the old processes' names: the prefix of their threads' */
    g_autoptr(GHashTable) proc = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                                       g_free);
    const cJSON *e = NULL;
    cJSON_ArrayForEach(e, events) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, "process_name") == 0) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
            g_hash_table_insert(proc, GUINT_TO_POINTER((guint) num(e, "pid")),
                                g_strdup(cJSON_GetObjectItemCaseSensitive(a, "name")
                                         ->valuestring));
        }
    }
    cJSON_ArrayForEach(e, events) {
        const char *ph = cJSON_GetObjectItemCaseSensitive(e, "ph")->valuestring;
        const char *ename = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
        guint old_pid = (guint) num(e, "pid");
        double tid = old_pid * (double) TID_STRIDE + num(e, "tid");
        if (strcmp(ph, "M") == 0) {
            /* processes become threads: named "<processor> <track>" */
            if (strcmp(ename, "thread_name") == 0) {
                const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
                const char *pn = g_hash_table_lookup(proc, GUINT_TO_POINTER(old_pid));
                g_autofree char *tn = g_strdup_printf("%s %s", pn ? pn : "?",
                    cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring);
                add_meta(m, "thread_name", pid, (int64_t) tid, "name", cJSON_CreateString(tn));
                add_meta(m, "thread_sort_index", pid, (int64_t) tid, "sort_index",
                         cJSON_CreateNumber(tid));
            }
            continue;
        }
        g_autoptr(cJSON) c = cJSON_Duplicate(e, TRUE);
        cJSON_ReplaceItemInObjectCaseSensitive(c, "pid", cJSON_CreateNumber(pid));
        if (cJSON_GetObjectItemCaseSensitive(c, "tid")) {
            cJSON_ReplaceItemInObjectCaseSensitive(c, "tid", cJSON_CreateNumber(tid));
        }
        if (cJSON_GetObjectItemCaseSensitive(c, "id")) {
            cJSON_ReplaceItemInObjectCaseSensitive(c, "id", cJSON_CreateNumber(
                m->runs * FLOW_STRIDE + num(e, "id")));
        }
        /* ts: whole ns written as microseconds with 3 decimals; cJSON
         * prints such a number back with the same digits */
        add_event(m, (uint64_t) llround(num(e, "ts") * 1000), c);
    }
    if (m->other == NULL) {
        m->other = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "otherData"), TRUE);
        cJSON_DeleteItemFromObjectCaseSensitive(m->other, "policy");
        cJSON_AddArrayToObject(m->other, "policies");
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(m->other, "policies"),
                         cJSON_CreateString(name));
    m->runs++;
}

static gint
event_cmp(gconstpointer a, gconstpointer b)
{
    const Event *x = a, *y = b;
    if (x->ts_ns != y->ts_ns) {
        return x->ts_ns < y->ts_ns ? -1 : 1;
    }
    if (x->run != y->run) {
        return x->run < y->run ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

gboolean
hs_trace_merge_write(HsTraceMerge *m, const char *path, GError **error)
{
    g_array_sort(m->events, event_cmp);
    g_autoptr(GString) out = g_string_new("{\"traceEvents\":[\n");
    for (guint i = 0; i < m->events->len; i++) {
        g_string_append(out, g_array_index(m->events, Event, i).text);
        g_string_append(out, i + 1 < m->events->len ? ",\n" : "\n");
    }
    g_autofree char *other = m->other ? cJSON_PrintUnformatted(m->other) : g_strdup("{}");
    g_string_append_printf(out, "],\"displayTimeUnit\":\"ns\",\"otherData\":%s}\n", other);
    return hs_outfile_write_all(path, out->str, out->len, error);
}
