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

typedef struct HsRunOpts {
    char *soc;                   /* name or path (default sd8gen3) */
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

/* Check values, load SoC and model, fill @w.  Errors: usage or config. */
gboolean hs_run_opts_resolve(const HsRunOpts *o, unsigned formats, HsFormat *format,
                             HwSoc **soc, MdlSpec **spec, SimWorkload *w,
                             GError **error);

/* A policy by name, or the plug-in's when @name matches it. */
const SimPolicy *hs_run_opts_policy(const HsRunOpts *o, const char *name,
                                    GError **error);

/* Print a run as text, JSON or CSV (report.c). */
void hs_run_print(const HwSoc *soc, const SimRunReport *r, HsFormat format);
void hs_run_print_csv(const SimRunReport *r, gboolean header);
void hs_run_print_text(const HwSoc *soc, const SimRunReport *r);

/* "ffn_down (45 % of prefill kernel time) split gpu 38 %, npu 62 %", or
 * NULL if the prefill ran no kernels.  (transfer full) */
char *hs_run_hot_op_text(const HwSoc *soc, const SimRunReport *r);

/* Write the Perfetto trace of an executed plan (report.c). */
gboolean hs_run_write_trace(const char *path, const HwSoc *soc, const SimPlan *plan,
                            const SimExecResult *x, const SimRunReport *r, GError **error);

/* One run as JSON (the stable schema documented in README.md). */
cJSON *hs_run_report_json(const HwSoc *soc, const SimRunReport *r);

/* A SimProgressFn for a terminal: "what:  42 %" on stderr, cleared at the end. */
void hs_progress_stderr(void *opaque, const char *what, uint64_t done, uint64_t total);

#endif /* HS_RUN_OPTS_H */
