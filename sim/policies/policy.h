/*
 * policy.h - the interface every scheduling policy implements.
 *
 * A policy turns one phase of the model's operator graph (the prefill of S
 * tokens, or one decode step) into tasks of a plan: which processor runs
 * each node, on which slice (weight rows, tokens, padding to a prepared NPU
 * shape), and which NPU graphs must be prepared.  It never adds
 * dependencies or syncs by hand: the plan builder (sim/builder.h) derives
 * them from the data flow, inserting a sync task of the chosen mechanism
 * wherever a consumer reads a producer's output on another processor.  A
 * policy may *ask* the hardware models what something would cost (the
 * HeteroLLM profiler) through the builder's cost helpers; it does not run
 * anything.
 *
 * Adding a policy: write sim/policies/NAME.c defining one SimPolicy, add it
 * to the table in sim/policies/registry.c and to sim/meson.build.  Or build
 * it as a shared module exporting
 *
 *     const SimPolicy *hs_policy_plugin(void);
 *
 * and pass --policy-plugin FILE.so (see tests/plugin/plugin-example.c; README,
 * "Policies", has the compile line).  Its name may not be a built-in's.
 */
#ifndef SIM_POLICY_H
#define SIM_POLICY_H

#include <glib.h>

#include "sim/builder.h"

/* The ABI version a plug-in must report; bump when SimPolicy changes. */
#define SIM_POLICY_ABI 2

typedef struct SimPolicy {
    uint32_t abi;                /* SIM_POLICY_ABI */
    const char *name;            /* "hetero-tensor" */
    const char *desc;            /* one line for `list policies` */
    /*
     * Place every node of @b's graph (in the builder's topological order)
     * by calling sim_builder_*().  FALSE with a GError if the policy cannot
     * run this workload (e.g. a shape the NPU stack does not support).
     */
    gboolean (*plan_phase)(SimBuilder *b, GError **error);
    /*
     * The software stack this policy models (a profile in configs/stacks/,
     * e.g. "heterollm", "llama-cpp", "mllm", "transformer-lite",
     * "npu-tts"): what its kernel libraries achieve on the SoC.  NULL: the
     * default stack.
     */
    const char *stack;
} SimPolicy;

/* Built-in policies, NULL-terminated.  (transfer none) */
const SimPolicy *const *sim_policy_list(void);
/* The ablation variants (NAME/VARIANT), NULL-terminated: found by name,
 * not listed. */
const SimPolicy *const *sim_policy_variants(void);

/* A built-in by name, or NULL. */
const SimPolicy *sim_policy_find(const char *name);

/*
 * Load a policy from a shared module.  The module stays loaded for the
 * life of the process.  Errors: HS_CONFIG_ERROR naming the file.
 */
const SimPolicy *sim_policy_load_plugin(const char *path, GError **error);

#endif /* SIM_POLICY_H */
