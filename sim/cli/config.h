/*
 * config.h - a run's fully resolved configuration: the SoC and model
 * loaded with the --set overrides applied, and its hash.
 *
 * The hash is SHA-256 of the canonical JSON (hs_config_resolved: cJSON's
 * compact printing of the SoC and model as their loaders read them, with
 * defaults filled in, and the workload), so two runs with the same hash
 * simulated the same thing however it was spelled (a file edited, or the
 * same key set with --set).
 */
#ifndef HS_CLI_CONFIG_H
#define HS_CLI_CONFIG_H

#include "hw/soc.h"
#include "models/spec.h"
#include "sim/run.h"
#include "sim/util/override.h"

/* Load a SoC / model by name or path with @ovr (may be NULL) applied.
 * A loader error about an overridden key names the --set option. */
HwSoc *hs_config_load_soc(const char *name, const HsOverrides *ovr, GError **error);
MdlSpec *hs_config_load_model(const char *name, const HsOverrides *ovr, GError **error);
/* A software stack by name or path with @ovr's stack.KEY and
 * stack@NAME.KEY (NAME its own) applied. */
HwStack *hs_config_load_stack(const char *name, const HsOverrides *ovr, GError **error);

/* One line on stderr for each --set DOC@OTHER.KEY of @set (NULL-terminated,
 * may be NULL) whose OTHER is not @name, the one @doc ("soc", "stack") the
 * command uses: it changes nothing.  @whose says whose @name it is ("this
 * run's", "this one"). */
void hs_config_warn_other_targets(char *const *set, const char *doc, const char *name,
                                  const char *whose);

/* A SoC from its resolved JSON (a run directory's config.json "soc"),
 * with @ovr's soc.* and stack.* applied.  @what names it in errors. */
HwSoc *hs_config_soc_from_json(const cJSON *json, const char *what, const HsOverrides *ovr,
                               GError **error);

/* The --set list a run directory's config.json (@cfg) records, but the
 * model's (its recording holds the model as changed) and, unless
 * @with_soc, the SoC's; then @more (the command line's, later, so they
 * win).  The SoC's are already in the config's resolved SoC and apply
 * again to the same values (on another SoC they would not mean the
 * same); the stacks' (stack.*, stack@NAME.*) are in no resolved
 * document, so without them a replay would run other kernels.
 * (transfer full) */
GStrv hs_config_recorded_sets(const cJSON *cfg, gboolean with_soc, const char *const *more);

/* A run directory's stack, as its run loaded it (config.json's
 * "stack_resolved"), made the one @soc loads under the name the run used:
 * the stack a later version ships, or a stack file changed or moved
 * since, does not change what the directory replays.  TRUE when @cfg has
 * none (an older directory: the stack is then loaded by its name).
 * @cfg_path names it in errors. */
gboolean hs_config_preload_stack(HwSoc *soc, const cJSON *cfg, const char *cfg_path,
                                 GError **error);

/* {"soc": {...}, "model": {...}, "workload": {...}}  (transfer full) */
cJSON *hs_config_resolved(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w);

/* Lower-case hex SHA-256 of hs_config_resolved's compact print.
 * (transfer full) */
char *hs_config_hash(const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w);

/* {"overrides": ["npu.sram_kib=16384"], "hash": "..."}: what a report
 * records of its configuration.  (transfer full) */
cJSON *hs_config_json(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                      const SimWorkload *w);

/* A run directory's config.json: {"soc", "model", "workload" (as
 * hs_config_resolved), "policy" (left out when @policy is NULL: a
 * compare's, which lists its policies), "stack" (or null), "overrides",
 * "hash", "stack_resolved" ({"name_or_path", "profile"}: the stack the
 * policy ran on as @soc loaded it, --set included; with @policy only)}.
 * (transfer full) */
cJSON *hs_config_request(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                         const SimWorkload *w, const char *policy, const char *stack);

/* hs_provenance_json() with "config": hs_config_request()'s resolved SoC,
 * stack and --set (not its sources nor its own provenance), which replay
 * runs a recording under.  (transfer full) */
cJSON *hs_provenance_with_config(const HsOverrides *ovr, const HwSoc *soc, const MdlSpec *spec,
                                 const SimWorkload *w, const char *policy, const char *stack);

/* Remove every member of an object whose value is null, at any depth:
 * `soc show --format json` prints an optional key left out as null, which
 * the loader refuses, so the shown file loads back (to the same config
 * and hash).  Array elements stay. */
void hs_json_drop_nulls(cJSON *j);

/*
 * Provenance: what a reviewer needs to reproduce an output, put in every
 * one (text's last line, JSON's "provenance", CSV's columns, a trace's
 * metadata, a recording's "provenance"): the simulator's version
 * (hs_version(), git describe), the command line (each argument
 * shell-quoted), the resolved config's hash, and the SoC / model / stack
 * as given: a file is reported as "npu2x.json (from sd8gen3)", its base
 * name and the name inside it, so two SoC files never print the same.
 * One command per process: the state is the process's.
 */
/* The command line: @argv[0] is the command ("run"), as main passes it. */
void hs_provenance_command(int argc, char *const *argv);
/* The config it ran: @soc_arg, @model_arg, @stack_arg as given (may be
 * NULL: the loaded name is used). */
void hs_provenance_config(const char *soc_arg, const char *model_arg, const char *stack_arg,
                          const HwSoc *soc, const MdlSpec *spec, const SimWorkload *w);
/* "npu2x.json (from sd8gen3)" for a file @arg, else @name.  The string
 * lives until exit.  (transfer none) */
const char *hs_provenance_label(const char *arg, const char *name);
const char *hs_provenance_soc(void);      /* the SoC's label, or NULL */
const char *hs_provenance_model(void);
const char *hs_provenance_command_line(void);
const char *hs_provenance_hash(void);
/* "hetero-sim VERSION: COMMAND"  (transfer none) */
const char *hs_provenance_line(void);
/* {"version","command","config_hash","soc","soc_file",...}  (transfer full) */
cJSON *hs_provenance_json(void);
/* The process's provenance set aside, and cleared (a sweep point run in
 * this process sets its own: its `run` command and config), then put back
 * by hs_provenance_pop, which frees @saved. */
typedef struct HsProvenance HsProvenance;
HsProvenance *hs_provenance_push(void);
void hs_provenance_pop(HsProvenance *saved);
/* Shell-quote @arg only where a shell needs it.  (transfer full) */
char *hs_shell_quote(const char *arg);

#endif /* HS_CLI_CONFIG_H */
