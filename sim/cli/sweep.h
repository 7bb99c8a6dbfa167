/*
 * sweep.h - `hetero-sim sweep`: a design-space grid run into SQLite.
 *
 * A spec (JSON) names settings: run options (soc, model, policy, sync,
 * prompt, decode, batch, chunk, functional, seed, render, frame-ms,
 * frame-mb, llm-priority) and config keys as `--set` takes them
 * (npu.sram_kib, model.num_hidden_layers):
 *
 *   { "base":   { "soc": "sd8gen3", "functional": "off", "decode": 8 },
 *     "axes":   { "policy": ["gpu-only", "hetero-tensor"],
 *                 "npu.stationary_kib": [2048, 4096, 8192, 16384] },
 *     "points": [ { "policy": "npu-only", "prompt": 512 } ] }
 *
 * The points are base + each combination of the axes (the first axis
 * varies slowest), then base + each explicit point.  A point is exactly
 * `hetero-sim run --format json` with its settings as options; its key is
 * the canonical JSON of its settings (names sorted), which is what a
 * database row is found by when a sweep resumes.
 *
 * sweep-spec.c: the spec and its points.  sweep-db.c: the database.
 * sweep-run.c: running points (forked workers, MPI ranks).
 */
#ifndef HS_SWEEP_H
#define HS_SWEEP_H

#include <glib.h>
#include <cjson/cJSON.h>
#include <sqlite3.h>

typedef struct HsSweepPoint {
    cJSON *settings;             /* object, names sorted (owned) */
    char *key;                   /* compact print of settings */
} HsSweepPoint;

typedef struct HsSweepSpec {
    char *path;
    char *description;           /* $.description, NULL if none */
    cJSON *base, *axes, *explicit_points;   /* $.base, $.axes, $.points as read
                                             * (NULL if absent) */
    GPtrArray *points;           /* of HsSweepPoint *, owned */
    GPtrArray *names;            /* every setting name, sorted (char *, owned) */
} HsSweepSpec;

/* Read and expand a spec, with the command line's --set PATH=VALUE
 * (@set, may be NULL) laid over its base.  Errors: HS_CONFIG_ERROR
 * "FILE: $.axes.x: ...", HS_USAGE_ERROR for @set. */
HsSweepSpec *hs_sweep_spec_load(const char *path, const char *const *set, GError **error);
/* Most points the axes of a spec may make: a million points is a week of
 * timing-only runs, a typo surely (and expanding them takes seconds). */
#define HS_SWEEP_MAX_POINTS 1000000u

/* The same for @len bytes of JSON in memory, @what naming them, the axes
 * making at most @max_points points (HS_SWEEP_MAX_POINTS for the CLI; the
 * fuzz target takes fewer, as expanding half a million points under ASan
 * passes its time limit).  */
HsSweepSpec *hs_sweep_spec_parse(const char *text, gsize len, const char *what,
                                 const char *const *set, guint max_points, GError **error);
void hs_sweep_spec_free(HsSweepSpec *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HsSweepSpec, hs_sweep_spec_free)

/* The `run` arguments of a point: {"run", "--format", "json", ...}.
 * (transfer full) */
GStrv hs_sweep_point_argv(const HsSweepPoint *p);

/* The SQL column of a setting: "npu.sram_kib" -> "npu_sram_kib". */
char *hs_sweep_column(const char *setting);

/*
 * Run one point here and now: its record, the object a worker hands back
 *   {"key": K, "status": "ok"|"error", "error": E, "wall_s": W,
 *    "version": V, "result": <run --format json, minus sim.wall_s>}
 * (transfer full).  Never fails: an error is recorded in it.
 */
cJSON *hs_sweep_point_run(const HsSweepPoint *p);

/*
 * Run @p in a forked child, its own process, so no process-wide state
 * (the W4 kernel's forced ISA, caches) leaks from one point to the next:
 * the child sets @threads OpenMP threads and tells the memory guard
 * @concurrent points share the machine, runs the point and writes its
 * record to *fd.  hs_sweep_child_finish() reaps it: the record read from
 * the pipe, one saying how the child died, or NULL if it was interrupted
 * (SIGINT, SIGTERM, SIGHUP: not recorded, so a resumed sweep runs it).
 */
gboolean hs_sweep_child_start(const HsSweepPoint *p, int threads, unsigned concurrent,
                              int *pid, int *fd, GError **error);
cJSON *hs_sweep_child_finish(const HsSweepPoint *p, int pid, const GString *out);

/* --- database (sweep-db.c) --- */

/* Open or create @path (WAL journal), with a column per name in @names
 * (may be NULL).  Errors: HS_CONFIG_ERROR "@path: ...". */
sqlite3 *hs_sweep_db_open(const char *path, GPtrArray *names, GError **error);
/* Open an existing database to read (show, plot): never creates or
 * changes a file.  Errors: HS_CONFIG_ERROR "@path: ...". */
sqlite3 *hs_sweep_db_open_read(const char *path, GError **error);
/* Keys already in the database (ok or error; errors too unless @retry). */
GHashTable *hs_sweep_db_done(sqlite3 *db, gboolean retry_errors, GError **error);
/* Store a record (one transaction); @point is its index in the spec or -1. */
gboolean hs_sweep_db_insert(sqlite3 *db, const cJSON *record, int point, GError **error);

/* The metric columns are the report's measurement fields
 * (report-fields.h: hs_report_fields with metric TRUE), named and typed
 * as in CSV; a database made before a field was added gets its column
 * when it is opened to run.  --show prints the headline ones. */

/* --show: print the rows (text, csv or json) matching @where (SQL, may
 * be NULL): @columns (comma-separated settings or columns, may be NULL
 * for point, settings, status, headline metrics, error; @all adds the
 * rest). */
gboolean hs_sweep_db_show(sqlite3 *db, const char *where, const char *columns, int format,
                          gboolean all, GError **error);

/* A setting column's human label, with its unit ("npu.sram_kib (KiB)"). */
char *hs_sweep_label(const char *column);

/* --- parallel runs (sweep-run.c) --- */

typedef struct HsSweepRun {
    const HsSweepSpec *spec;
    sqlite3 *db;
    GArray *todo;                /* of int: point indices to run */
    int jobs;
    gboolean progress;
} HsSweepRun;

/* Run r->todo on r->jobs forked workers, storing each record as it
 * arrives; a progress line on stderr if r->progress. */
gboolean hs_sweep_run_local(HsSweepRun *r, GError **error);

/* OpenMP threads for each of @workers concurrent points on this host. */
int hs_sweep_threads_per_point(int workers);

/* Progress line: "sweep: 12/48 points, 3.1/s, ETA 0:12". */
void hs_sweep_progress(guint done, guint total, double t0_s, gboolean last);

/* --- MPI (sweep-mpi.c; stubs without HS_HAVE_MPI) --- */

/* Under mpirun with more than one rank: MPI_Init, TRUE, *rank, *size. */
gboolean hs_sweep_mpi_start(int *rank, int *size);
/* A rank other than 0: ask rank 0 for points and hand back records until
 * told to stop. */
void hs_sweep_mpi_work(const HsSweepSpec *spec);
/* Rank 0: hand out r->todo to the @size - 1 other ranks, store records. */
gboolean hs_sweep_mpi_coordinate(HsSweepRun *r, int size, GError **error);
void hs_sweep_mpi_finish(void);

#endif /* HS_SWEEP_H */
