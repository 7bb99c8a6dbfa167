/*
 * run-opts.h - the options `run` and `compare` share: what to simulate
 * (SoC, model, workload, sync mechanism) and how to print it.
 */
#ifndef HS_RUN_OPTS_H
#define HS_RUN_OPTS_H

#include "hw/soc.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "sim/run.h"
#include "sim/util/override.h"

typedef struct HsRunOpts {
    char *soc;                   /* name or path (default sd8gen3) */
    char *stack;                 /* software stack replacing the policy's, or NULL */
    char *model;                 /* name or path (default llama-3-8b) */
    char *sync;                  /* driver | fast */
    char *format;
    char *trace;                 /* run only */
    char *plugin;                /* --policy-plugin FILE.so */
    char *functional;            /* off | layers=N | full */
    gint64 seed;
    int prompt, decode, batch, chunk;
    double render_fps, frame_ms, frame_mb;   /* a game on the GPU alongside */
    char *llm_priority;          /* low | normal */
    char *governor;              /* ondemand | performance (DVFS), or NULL */
    char **set;                  /* --set PATH=VALUE, repeatable */
    HsOverrides *ovr;            /* parsed from set (owned) */
    char **given;                /* the long names of the options on the command line */
} HsRunOpts;

/*
 * Parse the shared options into @o (defaults filled in) plus the
 * command's own @extra entries (NULL-terminated), and reject positional
 * arguments.  *help_shown as hs_cli_parse().  Free @o with
 * hs_run_opts_clear() in every case.
 */
gboolean hs_run_opts_parse(const char *command, const char *summary,
                           const GOptionEntry *extra, HsRunOpts *o, int *argc,
                           char ***argv, gboolean *help_shown, GError **error);
void hs_run_opts_clear(HsRunOpts *o);

/* --governor @governor (may be NULL: nothing) as the SoC key it stands
 * for: "governor=G" put before the --set overrides in *@set, so a later
 * --set governor=... still wins.  Usage error unless ondemand or
 * performance. */
gboolean hs_cli_governor(const char *governor, char ***set, GError **error);
#define HS_GOVERNOR_HELP \
    "DVFS: ondemand (each processor's governor from the SoC config) or performance " \
    "(every processor at its top operating point); as --set governor=G (default: the " \
    "SoC config's, ondemand)"

/* The shared options as GOptionEntry rows bound to @o's fields (@o gets
 * its defaults), NULL-terminated.  run-opts-table.c: GLib only, so the
 * sweep spec reader checks a setting by this table.  (transfer full) */
GOptionEntry *hs_run_opts_entries(HsRunOpts *o);

/* [*lo, *hi], the range hs_run_opts_resolve() puts on integer option
 * @name (a GOption long name); FALSE if it puts none. */
gboolean hs_run_opts_int_range(const char *name, double *lo, double *hi);

/* Check values, load SoC and model (with the --set overrides), fill @w.
 * Errors: usage or config. */
gboolean hs_run_opts_resolve(const HsRunOpts *o, unsigned formats, HsFormat *format,
                             HwSoc **soc, MdlSpec **spec, SimWorkload *w,
                             GError **error);

/* One line on stderr for each --set of @o that changes nothing: the
 * resolved config (less the keys that only bound another: npu.sram_kib,
 * memory.peak_gbps) hashes the same with it as without it. */
void hs_run_opts_warn_noop(const HsRunOpts *o, const HwSoc *soc, const MdlSpec *spec,
                           const SimWorkload *w);

/* A policy by name, or the plug-in's (--policy-plugin) when @name matches
 * it or is NULL; with no plug-in NULL means hetero-tensor.  Unknown names
 * are HS_CONFIG_ERROR_NOT_FOUND (exit 1, as an unknown SoC or model). */
const SimPolicy *hs_run_opts_policy(const HsRunOpts *o, const char *name,
                                    GError **error);
const SimPolicy *hs_cli_policy(const char *plugin, const char *name, GError **error);

/* Refuse a request past @spec's context length (max_position_embeddings)
 * or a check of more layers than it has.  Usage error. */
gboolean hs_cli_check_fits(const MdlSpec *spec, const SimWorkload *w, GError **error);

/* Print a run as text, JSON or CSV (report.c). */
void hs_run_print(const HwSoc *soc, const SimRunReport *r, HsFormat format);

/*
 * What is wrong with a run's result, or NULL: its checked values differ
 * from the reference, or @plan_failure (a wrong plan found before it ran,
 * may be NULL).  (transfer full)
 */
char *hs_run_failure(const SimRunReport *r, const char *plan_failure);

/*
 * hs_run_print(), with a failed run (hs_run_failure) said at the top of the
 * text ("FAILED: ..." before the report), as "failure" in the JSON, and
 * returned as HS_SIM_ERROR_MISMATCH (exit status 3).
 */
gboolean hs_run_print_checked(const HwSoc *soc, const SimRunReport *r, HsFormat format,
                              const char *plan_failure, cJSON *json_extra, GError **error);
void hs_run_print_csv(const SimRunReport *r, gboolean header);

/* A run's three reports as text (each ends in a newline): the text one
 * with "FAILED: @why" first when @why and the provenance line last, the
 * JSON one with @json_extra's members, "failure" and "provenance". */
typedef struct HsRunTexts {
    char *text, *json, *csv;
} HsRunTexts;
void hs_run_texts(const HwSoc *soc, const SimRunReport *r, const char *why,
                  const cJSON *json_extra, HsRunTexts *out);
void hs_run_texts_clear(HsRunTexts *t);

/*
 * A run directory (--out DIR): config.json, report.json, report.csv,
 * trace.json, recording.json, summary.txt, renamed into place together
 * (hs_outgroup) or not at all.  DIR is created, or must be empty or a
 * previous run directory (only those names, and a compare's folders of
 * them, one per policy).  The trace and the recording
 * are streamed to hidden .part files in DIR as the run goes
 * (hs_run_dir_trace, hs_run_dir_recording), taken into the group at
 * commit; hs_run_dir_free removes the parts.
 */
typedef struct HsRunDir HsRunDir;
HsRunDir *hs_run_dir_open(const char *dir, GError **error);
const char *hs_run_dir_trace(HsRunDir *rd);
const char *hs_run_dir_recording(HsRunDir *rd);
/* config.json: @config (the resolved request) plus "provenance". */
void hs_run_dir_set_config(HsRunDir *rd, const cJSON *config);
/* The folder a compare directory keeps policy @name's run in: the name,
 * a variant's '/' made '_' (mllm-npu/in-order: mllm-npu_in-order).
 * (transfer full) */
char *hs_run_dir_folder(const char *name);
/*
 * A compare's run directory for one policy, DIR/FOLDER (hs_run_dir_folder
 * of @name; made at commit; its
 * trace and recording parts are hidden files in DIR meanwhile), committed
 * with @rd: a whole run directory of its own, which `replay DIR/NAME` and
 * `compare --baseline DIR/NAME` read.  The same @name gives the same
 * child.  NULL (config error) when @name cannot be a folder name or
 * shares another child's.
 * (transfer none: @rd's)
 */
HsRunDir *hs_run_dir_child(HsRunDir *rd, const char *name, GError **error);
/* A child's reports, written at the parent's commit.  Copied. */
void hs_run_dir_set_texts(HsRunDir *rd, const HsRunTexts *t);
/* Write @rd's files with @t and every child's, together or not at all;
 * a previous compare's run directories not among the children are
 * removed after. */
gboolean hs_run_dir_commit(HsRunDir *rd, const HsRunTexts *t, GError **error);
void hs_run_dir_free(HsRunDir *rd);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsRunDir, hs_run_dir_free)

/* hs_run_print_checked, and @dir (may be NULL) committed with the reports. */
gboolean hs_run_output(const HwSoc *soc, const SimRunReport *r, HsFormat format,
                       const char *plan_failure, cJSON *json_extra, HsRunDir *dir,
                       GError **error);
/* What hs_run_print_csv prints: the report's columns, then version,
 * command and config_hash (config.h's provenance).  (transfer full) */
char *hs_run_csv_text(const SimRunReport *r, gboolean header);
/* @line (one CSV line, a newline at its end or not) with the provenance
 * columns appended: the header's "version,command,config_hash", or this
 * run's values (each quoted as CSV needs), then a newline.  (transfer full) */
char *hs_csv_with_provenance(const char *line, gboolean header);
void hs_run_print_text(const HwSoc *soc, const SimRunReport *r);


/*
 * A trace written as runs go (report.c): open @path, then for each run
 * hs_run_trace_begin (@label: NULL for a lone run, else e.g. the policy,
 * which names the run's one process: perfetto.h) sets @w's observer, the run
 * runs, hs_run_trace_end; hs_run_trace_close renames it into place with
 * @soc, @model, @policy and @sync as otherData (abort: trc_trace_abort).
 */
typedef struct TrcTrace TrcTrace;
TrcTrace *hs_run_trace_open(const char *path, GError **error);
void hs_run_trace_begin(TrcTrace *tr, const char *label, const HwSoc *soc, SimWorkload *w);
void hs_run_trace_end(TrcTrace *tr, SimWorkload *w);
gboolean hs_run_trace_close(TrcTrace *tr, const HwSoc *soc, const char *model,
                            const char *policy, SimSyncMech sync, GError **error);

/* A SimProgressFn for a terminal: "what:  42 %" on stderr, cleared at the end. */
void hs_progress_stderr(void *opaque, const char *what, uint64_t done, uint64_t total);

#endif /* HS_RUN_OPTS_H */
