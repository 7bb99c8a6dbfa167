/*
 * trace-merge.h - several runs' Perfetto traces in one file, one process
 * per run (`compare --trace`: one per policy).
 *
 * Each run's trace is the usual one (traces/perfetto.c: a process per
 * processor, plus sync and DRAM); here each becomes one process named
 * after the run, whose threads are the run's tracks, named "<processor>
 * lane N" ("gpu lane 0", "sync lane 0", "cpu-mid submissions"), with
 * the DRAM counters under it.  Times, slices and arguments are kept
 * (whole-ns times, printed back unchanged); flow ids are made unique.
 */
#ifndef HS_TRACE_MERGE_H
#define HS_TRACE_MERGE_H

#include <glib.h>

typedef struct HsTraceMerge HsTraceMerge;

HsTraceMerge *hs_trace_merge_new(void);
void hs_trace_merge_free(HsTraceMerge *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsTraceMerge, hs_trace_merge_free)

/* Add one run's trace (trc_perfetto_to_string's text) as process @name. */
void hs_trace_merge_add(HsTraceMerge *m, const char *name, const char *trace);

/* Write every added run to @path atomically, events sorted by time. */
gboolean hs_trace_merge_write(HsTraceMerge *m, const char *path, GError **error);

#endif /* HS_TRACE_MERGE_H */
