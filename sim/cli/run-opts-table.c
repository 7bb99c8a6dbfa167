/*
 * run-opts-table.c - the shared options of `run` and `compare` as a table
 * (GLib only), and the ranges hs_run_opts_resolve() puts on the integer
 * ones: what the sweep spec reader checks a setting against, so a sweep
 * point says what the command line would, before anything runs.  See
 * run-opts.h.
 */
#include "sim/cli/run-opts.h"

#include <string.h>

GOptionEntry *
hs_run_opts_entries(HsRunOpts *o)
{
    *o = (HsRunOpts) { .prompt = 256, .decode = 32, .batch = 1, .chunk = 256, .seed = 1,
                       .frame_ms = 8, .frame_mb = 48 };
    GOptionEntry e[] = {
        { "soc", 's', 0, G_OPTION_ARG_STRING, &o->soc,
          "SoC config: a name from 'list socs' or a JSON file (default sd8gen3)", "SOC" },
        { "stack", 0, 0, G_OPTION_ARG_STRING, &o->stack,
          "Software stack the kernels run on, replacing each policy's own: a name from "
          "'list stacks' or a JSON file", "STACK" },
        { "model", 'm', 0, G_OPTION_ARG_STRING, &o->model,
          "Model: a name from 'list models', a config.json or a model directory "
          "(default llama-3-8b)", "MODEL" },
        { "sync", 0, 0, G_OPTION_ARG_STRING, &o->sync,
          "Sync mechanism between processors: driver or fast (default fast)", "MECH" },
        { "prompt", 'p', 0, G_OPTION_ARG_INT, &o->prompt,
          "Prompt tokens (prefill length, default 256)", "N" },
        { "decode", 'd', 0, G_OPTION_ARG_INT, &o->decode,
          "Decode steps (default 32)", "N" },
        { "batch", 'b', 0, G_OPTION_ARG_INT, &o->batch,
          "Sequences decoded together (test-time scaling, default 1)", "B" },
        { "chunk", 0, 0, G_OPTION_ARG_INT, &o->chunk,
          "Chunk size of the chunked policy (default 256)", "N" },
        { "functional", 0, 0, G_OPTION_ARG_STRING, &o->functional,
          "Check values against the unpartitioned reference: off, layers=N (the "
          "first N layers at full width) or full (default layers=1)", "MODE" },
        { "seed", 0, 0, G_OPTION_ARG_INT64, &o->seed,
          "Seed of the synthetic weights (default 1)", "S" },
        { "render", 0, 0, G_OPTION_ARG_DOUBLE, &o->render_fps,
          "A game renders on the GPU alongside at this frame rate (default 0: none)", "FPS" },
        { "frame-ms", 0, 0, G_OPTION_ARG_DOUBLE, &o->frame_ms,
          "GPU time of one frame alone (default 8, an assumed mid-weight game)", "MS" },
        { "frame-mb", 0, 0, G_OPTION_ARG_DOUBLE, &o->frame_mb,
          "DRAM traffic of one frame in MiB (default 48, assumed)", "MB" },
        { "llm-priority", 0, 0, G_OPTION_ARG_STRING, &o->llm_priority,
          "GPU queue priority of the LLM's kernels next to rendering: low or normal "
          "(default normal)", "P" },
        { "governor", 0, 0, G_OPTION_ARG_STRING, &o->governor, HS_GOVERNOR_HELP, "GOV" },
        { "policy-plugin", 0, 0, G_OPTION_ARG_FILENAME, &o->plugin,
          "Load a policy from a shared module (see README)", "FILE.so" },
        { "format", 'f', 0, G_OPTION_ARG_STRING, &o->format,
          "Output: text, json or csv (default text)", "FMT" },
        HS_SET_OPTION(&o->set),
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    return g_memdup2(e, sizeof(e));
}

/* The workload sizes a run accepts: the limits of its tables (decode up
 * to 65536 as recordings replay; see README "run"). */
static const struct {
    const char *name;
    double lo, hi;
} int_ranges[] = {
    { "prompt", 1, 32768 },
    { "decode", 0, 65536 },
    { "batch", 1, 256 },
    { "chunk", 1, 4096 },
};

gboolean
hs_run_opts_int_range(const char *name, double *lo, double *hi)
{
    for (size_t i = 0; i < G_N_ELEMENTS(int_ranges); i++) {
        if (strcmp(int_ranges[i].name, name) == 0) {
            *lo = int_ranges[i].lo;
            *hi = int_ranges[i].hi;
            return TRUE;
        }
    }
    return FALSE;
}
