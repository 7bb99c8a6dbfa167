/*
 * record.h - recordings: a run's workload, model, policy and full plan in
 * one JSON file that `hetero-sim replay` can re-execute — on the same SoC
 * (identical results), on another SoC (the same plan re-timed), or re-plan
 * with another policy.
 *
 * Format (version 1; README.md "Recordings" documents every key):
 *
 *   {"hs_record_version":1,
 *    "soc":"sd8gen3", "policy":"hetero-tensor",
 *    "model":{"name":"llama-3-8b","config":{...config.json fields...}},
 *    "workload":{"prompt":256,"decode":32,"batch":1,"sync":"fast",
 *                "functional":"layers=1","seed":1,
 *                "options":{"chunk_tokens":256,...}},
 *    "processors":[{"name":"cpu","kind":"cpu"},...],
 *    "tasks":[
 *     {"id":0,"name":"embed","kind":"kernel","phase":"prefill","step":0,
 *      "proc":"gpu","node":0,"tokens":[0,256],"rows":[0,4096],"pad":0,
 *      "op":"embed","prec":"w4a16","m":256,"k":1,"n":4096,"weight_lhs":false,
 *      "flops":0,"read_bytes":2097152,"write_bytes":2097152,"deps":[]},
 *     {"id":7,"name":"sync L0.wq fast","kind":"sync","phase":"prefill","step":0,
 *      "proc":"cpu","node":2,"sync":"fast","from":"npu","to":"gpu","deps":[3,4]},
 *     ...],
 *    "npu_offline":[32,64,...]}
 *
 * One task per line.  Written to a temporary file and renamed into place.
 */
#ifndef TRC_RECORD_H
#define TRC_RECORD_H

#include <glib.h>

#include "hw/soc.h"
#include "models/spec.h"
#include "sim/plan.h"
#include "sim/run.h"

#define TRC_RECORD_VERSION 1

/* Everything a replay needs. */
typedef struct TrcRecording {
    char *soc;                   /* SoC it was recorded on */
    char *policy;
    MdlSpec *spec;
    SimWorkload workload;
    uint32_t n_procs;
    char **proc_names;           /* NULL-terminated, n_procs long */
    HwKind *proc_kinds;
    SimPlan *plan;               /* proc indices in the recorded numbering */
    cJSON *config;               /* the run's configuration as its provenance
                                  * records it ($.provenance.config, written
                                  * by the CLI; opaque here), or NULL */
} TrcRecording;

void trc_recording_free(TrcRecording *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TrcRecording, trc_recording_free)

/*
 * A recording written as the run goes: the head at open, each
 * phase's tasks as they are planned (trc_record_add, a SimWorkload's
 * planned hook with the writer as opaque), the NPU shapes prepared
 * offline at close, which renames the file into place.  Abort (a failed
 * run) leaves no file.
 */
typedef struct TrcRecordWriter TrcRecordWriter;
TrcRecordWriter *trc_record_open(const char *path, const HwSoc *soc, const MdlSpec *spec,
                                 const char *policy, const SimWorkload *w, GError **error);
/* trc_record_open with a "provenance" object in the head (version,
 * command, config hash: the caller's; may be NULL).  Readers ignore it. */
TrcRecordWriter *trc_record_open_with(const char *path, const HwSoc *soc, const MdlSpec *spec,
                                      const char *policy, const SimWorkload *w,
                                      const cJSON *provenance, GError **error);
gboolean trc_record_add(void *writer, const SimPlan *plan, uint32_t from, GError **error);
gboolean trc_record_close(TrcRecordWriter *rw, GError **error);
void trc_record_abort(TrcRecordWriter *rw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TrcRecordWriter, trc_record_abort)

/* Write a recording of @plan atomically. */
gboolean trc_record_write(const char *path, const HwSoc *soc, const MdlSpec *spec,
                          const char *policy, const SimWorkload *w, const SimPlan *plan,
                          GError **error);

gboolean trc_record_write_with(const char *path, const HwSoc *soc, const MdlSpec *spec,
                               const char *policy, const SimWorkload *w, const SimPlan *plan,
                               const cJSON *provenance, GError **error);

/*
 * Read and check a recording: version, types and ranges of every field,
 * known processors, dependency ids, cycles, and that the slices of every
 * node tile its output exactly and fit the model's shapes.  Errors are
 * HS_TRACE_ERROR "FILE: $.tasks[3].deps[0]: expected ... (got ...)".
 */
TrcRecording *trc_record_read(const char *path, GError **error);

/* The same from JSON text in memory; @what names it in errors (the fuzz
 * target's entry point). */
TrcRecording *trc_record_parse(const char *text, gsize len, const char *what, GError **error);

/*
 * The recorded plan on @soc: processors matched by name, else by kind.
 * (transfer full)
 */
SimPlan *trc_record_plan_for(const TrcRecording *r, const HwSoc *soc, GError **error);

/*
 * A kernel of @plan that takes another processor's kernel output directly,
 * with no sync task between them (a recording whose sync was dropped), as
 * "task 5 (L0.wq on npu) takes the output of task 3 (L0.attn_norm on gpu)
 * with no sync between them (a dropped sync?)"; NULL if there is none.  The
 * embedding is exempt: it takes the next token's id, not tensor data.
 * Processor indices are @soc's.  (transfer full)
 */
char *trc_plan_unsynced(const SimPlan *plan, const HwSoc *soc);

#endif /* TRC_RECORD_H */
