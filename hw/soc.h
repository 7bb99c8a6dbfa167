/*
 * soc.h - a SoC built from its JSON description: processors, the shared
 * DRAM, the sync mechanisms.
 *
 *   {
 *     "name": "sd8gen3",
 *     "description": "Snapdragon 8 Gen 3 ...",
 *     "memory":     { "peak_gbps": {"value": 68, "source": "HeteroLLM §3.3"}, ... },
 *     "processors": [ { "name": "gpu", "model": "gpu", ... }, ... ],
 *     "sync":       { "driver": { ... }, "fast": { ... } }
 *   }
 *
 * Every number may carry its provenance as {"value": v, "source": "..."};
 * the shipped configs do so for every number.  Loading is table-driven:
 * unknown keys are rejected with the list of known ones, values are
 * checked for type and range, and each error names the file and JSON path.
 */
#ifndef HW_SOC_H
#define HW_SOC_H

#include <glib.h>
#include <cjson/cJSON.h>

#include "hw/dev.h"
#include "hw/dvfs.h"
#include "sim/util/json.h"

/* The one DRAM every processor shares. */
typedef struct HwMemParams {
    double peak_gbps;                /* theoretical peak (datasheet) */
    double ceiling_gbps;             /* achievable total, all initiators */
    double energy_pj_per_byte;       /* DRAM access energy */
    double idle_w;                   /* DRAM + interconnect background power */
} HwMemParams;

/* Conventional sync: blocking finish, then copy the hand-off buffer; the
 * consumer's queue was drained, so its next kernel pays the queue restart
 * (hw_dev_restart_ps on the stack; charged by the runtime, not here).
 * The copy has a part per call and a part per byte handed over; cache
 * maintenance of the bytes (clean/invalidate by VA) only where the
 * accelerators are not IO-coherent with the CPU (maint_gbps > 0). */
typedef struct HwSyncDriverParams {
    double finish_us;                /* blocking clFinish-style wait returns */
    double copy_us;                  /* host<->device copy: its per-call part */
    double copy_gbps;                /* ... and its rate over the bytes handed
                                      * over (0: no per-byte part) */
    double maint_gbps;               /* cache clean/invalidate of those bytes
                                      * (0: IO-coherent, none) */
} HwSyncDriverParams;

/* Fast sync: unified buffers, sleep for the predicted time, poll a flag.
 * usleep's 80-100 us granularity (HeteroLLM §4.2) has no key: the thread
 * sleeps the prediction rounded down and polls the rest, so the hand-off
 * costs one poll whatever the granularity (see sync.h). */
typedef struct HwSyncFastParams {
    double poll_us;                  /* one flag poll on a small/middle core */
} HwSyncFastParams;

struct HwSoc {
    char *name;                      /* "sd8gen3" */
    char *description;
    char *path;                      /* file it was loaded from, or NULL */
    char **bases;                    /* its bases' files, nearest first (NULL: none) */
    HwMemParams mem;
    HwSyncDriverParams sync_driver;
    HwSyncFastParams sync_fast;
    GPtrArray *devs;                 /* of HwDev*, owned, in config order */
    HwDvfs *dvfs;                    /* one per processor, by index (a processor
                                      * without a "dvfs" block: no points, always
                                      * at active_w) */
    uint32_t n_dvfs;                 /* entries of dvfs allocated */
    HwGovernorMode governor;         /* the run's: ondemand or performance */
    double baseline_w;               /* device power outside the SoC model (screen,
                                      * idle platform), 0: off */
    uint32_t control_cpu;            /* runs sync threads and kernel submission */
    GHashTable *sources;             /* JSON path -> source note, owned */
    char *stacks_dir;                /* where stack names are looked up */
    GHashTable *stacks;              /* name or path -> HwStack*, loaded once */
    GMutex stacks_lock;
    HsJsonEditFn stack_edit;         /* applied to every stack it loads (--set) */
    void *stack_edit_opaque;
};

/*
 * Load a SoC: @name_or_path is a shipped short name ("sd8gen3", looked up
 * as @configs_dir/NAME.json) or a path to a JSON file.  (transfer full)
 * Errors are HS_CONFIG_ERROR prefixed with the file name.
 */
HwSoc *hw_soc_load(const char *name_or_path, const char *configs_dir,
                   GError **error);
/* The same, with @edit (if non-NULL) applied to the parsed JSON first. */
HwSoc *hw_soc_load_edit(const char *name_or_path, const char *configs_dir,
                        HsJsonEditFn edit, void *opaque, GError **error);

/* Build from parsed JSON; @what names the source in errors. */
HwSoc *hw_soc_from_json(const cJSON *root, const char *what, GError **error);

void hw_soc_free(HwSoc *soc);                    /* NULL is a no-op */

/*
 * The stack profile @name_or_path (a name in @configs_dir/stacks/ of
 * hw_soc_load, or a JSON file), loaded on first use; NULL with
 * HS_CONFIG_ERROR if it cannot be.
 * (transfer none: lives as long as @soc)
 */
const HwStack *hw_soc_stack(const HwSoc *soc, const char *name_or_path, GError **error);
/* Make @json (a stack as hw_stack_to_json gives it) the stack
 * @name_or_path stands for in @soc, instead of its file (a run
 * directory's stack, as its run loaded it); the SoC's stack edits (--set)
 * apply to it as to a file.  @what names it in errors. */
gboolean hw_soc_stack_preload(HwSoc *soc, const char *name_or_path, const cJSON *json,
                              const char *what, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HwSoc, hw_soc_free)

/* Whether processor @p's governor samples during a run on @stack: it has
 * operating points and a governor other than performance, the run's mode
 * is not performance, and @stack's runtime does not pin it (a stack pins
 * the first processor of a kind, the one its kernels run on; the control
 * CPU's sync and submission threads sleep, whatever the stack). */
struct HwStack;
gboolean hw_soc_governor_samples(const HwSoc *soc, const struct HwStack *stack, uint32_t p);

/* The first processor of @kind, or NULL.  (transfer none) */
HwDev *hw_soc_find_kind(const HwSoc *soc, HwKind kind);
/* The processor called @name, or NULL.  (transfer none) */
HwDev *hw_soc_find_name(const HwSoc *soc, const char *name);

/* Short names of the SoCs shipped in @configs_dir, sorted. (transfer full) */
GStrv hw_soc_list(const char *configs_dir, GError **error);

/* The parsed config with defaults filled in, as text (with units and
 * sources) or as JSON (plain numbers). */
void hw_soc_dump_text(const HwSoc *soc, GString *out);
cJSON *hw_soc_to_json(const HwSoc *soc);                /* (transfer full) */

/* `soc describe`: every section's and model's accepted keys. */
void hw_soc_describe(GString *out);

/* The sections of a SoC config besides its processors (whose tables are
 * their classes' params): memory, sync.driver, sync.fast.  (transfer none) */
const HsParamSection *hw_soc_sections(void);

#endif /* HW_SOC_H */
