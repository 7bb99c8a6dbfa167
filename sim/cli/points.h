/*
 * points.h - a paper's published points, as `hetero-sim validate` reads
 * them from configs/points/PAPER.json.
 *
 * One entry per point: id, paper and section, SoC, model, policy, sync,
 * workload (prompt or prompts, decode steps, batch; optionally a game on
 * the GPU alongside), metric, the published value or range, the
 * tolerance, and for ratios a baseline (policy, sync, and optionally
 * another model, batch, stack or game frame rate).  A point may say it is a known
 * miss (with the reason) or that a parameter was fitted to it
 * ("calibrated", naming the parameter).  Everything is checked here, with
 * one-line errors naming the JSON path; nothing is simulated.
 *
 * A baseline is a software stack as much as a policy: the paper's
 * "llama.cpp" or "MNN-CPU" is the cpu-only policy on that engine's stack.
 * "stacks" at the top maps a policy to the stack the paper measured it on
 * (for every point of the file, either side of a ratio); a point's or a
 * baseline's own "stack" overrides it; neither: the policy's stack.
 */
#ifndef HS_POINTS_H
#define HS_POINTS_H

#include <glib.h>
#include <stdint.h>
#include <cjson/cJSON.h>

typedef enum {
    HS_METRIC_PREFILL_TPS,               /* prefill tokens/s */
    HS_METRIC_DECODE_TPS,                /* decode tokens/s (all sequences) */
    HS_METRIC_DECODE_GBPS,               /* DRAM GB/s during decode */
    HS_METRIC_PREFILL_W,                 /* average power in prefill */
    HS_METRIC_DECODE_W,                  /* average power in decode */
    HS_METRIC_PREFILL_NPU_MS,            /* NPU busy time in prefill */
    HS_METRIC_PREFILL_NPU_OVER_CPU,      /* NPU busy / CPU busy, prefill */
    HS_METRIC_DECODE_CPU_SHARE,          /* CPU busy / decode time */
    HS_METRIC_PREFILL_PREPARE_SHARE,     /* NPU graph preparation / prefill */
    HS_METRIC_PREFILL_PREPARE_MS,        /* NPU graph preparation in prefill, ms */
    HS_METRIC_PREFILL_FPS,               /* the game's frames/s during prefill */
    HS_METRIC_DECODE_FPS,                /* the game's frames/s during decode */
    /* ratios of the point's run over its baseline's */
    HS_METRIC_PREFILL_SPEEDUP,           /* prefill tokens/s, run / baseline */
    HS_METRIC_DECODE_SPEEDUP,            /* decode tokens/s, run / baseline */
    HS_METRIC_PREFILL_SPEEDUP_MEAN,      /* the same, mean over prompts */
    HS_METRIC_PREFILL_LATENCY_REDUCTION_MEAN,  /* 1 - time / baseline's */
    HS_METRIC_DECODE_STEP_RATIO,         /* decode ms per step, run / baseline */
    HS_METRIC_PREFILL_ENERGY_SAVING,     /* prefill J per token, baseline / run */
    HS_METRIC_DECODE_ENERGY_SAVING,      /* decode J per token, baseline / run */
    HS_METRIC_COUNT
} HsMetric;

extern const char *const hs_metric_name[];   /* HS_METRIC_COUNT entries: checked where defined */

/* Does @m compare the point's run with a baseline run? */
gboolean hs_metric_is_ratio(HsMetric m);

/* What a workload may ask for: the limits `run` puts on its options. */
#define HS_POINT_MAX_PROMPT 32768
#define HS_POINT_MAX_PROMPTS 64
#define HS_POINT_MAX_DECODE 4096
#define HS_POINT_MAX_BATCH 256
/* points in one file: each is one or two runs of `validate` (the papers'
 * files hold tens) */
#define HS_POINTS_MAX 10000

/* $.points[i].workload */
typedef struct HsPointWorkload {
    uint32_t prompt;             /* as written (0: absent, "prompts" given) */
    uint32_t prompts[HS_POINT_MAX_PROMPTS];  /* one or more prompt lengths
                                  * ("prompt" is copied to prompts[0]) */
    uint32_t n_prompts;
    uint32_t decode, batch;
    /* a game on the GPU alongside, as run's --render, --frame-ms,
     * --frame-mb and --llm-priority (render_fps 0: none) */
    double render_fps, frame_ms, frame_mb;
    gboolean llm_low;            /* the LLM's GPU kernels at low priority */
} HsPointWorkload;

/* $.points[i].baseline: ratios only; model and batch default to the
 * point's */
typedef struct HsPointBaseline {
    char *policy, *model;
    char *stack;                 /* software stack it was measured on (NULL:
                                  * the file's "stacks" entry for its policy,
                                  * else the policy's own) */
    gboolean sync_driver;        /* sync "driver" (else "fast") */
    uint32_t batch;
    double render_fps;           /* the game's frame rate (-1 when absent:
                                  * the point's; 0: no game) */
} HsPointBaseline;

typedef struct HsPoint {
    char *id, *paper, *soc, *model, *policy;
    char *stack;                 /* software stack of the run (NULL: the
                                  * file's "stacks" entry for its policy, else
                                  * the policy's own) */
    gboolean sync_driver;        /* sync "driver" (else "fast") */
    HsMetric metric;
    double published;            /* the value, or a range's midpoint (a
                                  * half-open range: its bound) */
    gboolean range;              /* published_range [lo, hi]; a null end
                                  * is open (lo -inf / hi +inf) */
    double lo, hi;
    double published_range[2];   /* as read ([-inf, inf]: absent) */
    double tolerance_pct;
    HsPointWorkload wl;
    HsPointBaseline base;
    char *known_miss;            /* why it misses (NULL: it must be met) */
    char *calibrated;            /* what was fitted to it (NULL: prediction) */
    char *note;
} HsPoint;

typedef struct HsPoints {
    char *name;                  /* the paper, from $.paper or the file stem */
    char *description;
    char **notes;                /* $.notes (NULL: none) */
    cJSON *stacks;               /* $.stacks: policy -> the stack this paper's
                                  * runs of it were measured on (NULL: none);
                                  * already applied to the points */
    HsPoint *points;
    guint n;
} HsPoints;

/*
 * Read and check a points file.  (transfer full)  Errors (HS_CONFIG_ERROR)
 * are one line starting with @path: "p.json: $.points[0].workload.prompts[1]:
 * expected an integer in [1, 32768] (got 0)".
 */
HsPoints *hs_points_load(const char *path, GError **error);

/* The same from @len bytes of JSON text in memory; @what names it in
 * errors (a fuzzer's entry point). */
HsPoints *hs_points_parse(const char *text, gsize len, const char *what,
                          GError **error);

void hs_points_free(HsPoints *p);                /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsPoints, hs_points_free)

#endif /* HS_POINTS_H */
