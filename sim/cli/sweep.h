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
 * database row is found by when a sweep resumes.  A row is kept only while
 * its point_hash (the point's configuration resolved: SoC and model as
 * loaded after --set, workload, policy, software stack) and version
 * (hetero-sim's, from git) are the ones the point has now: an edited SoC
 * file, or another build, makes the row stale and the point runs again.
 *
 * sweep-spec.c: the spec and its points.  sweep-db.c: the database.
 * sweep-point.c: running a point, in a worker process.  sweep-run.c:
 * running points (workers on this machine; sweep-mpi.c: MPI ranks).
 */
#ifndef HS_SWEEP_H
#define HS_SWEEP_H

#include <glib.h>
#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>

/* A point is its key alone, the compact print of its settings (an
 * object, names sorted): a million-point grid holds a million short
 * strings, not a million parsed objects. */
typedef struct HsSweepPoint {
    char *key;
} HsSweepPoint;

typedef struct HsSweepSpec {
    char *path;
    char *description;           /* $.description, NULL if none */
    cJSON *base, *axes, *variants, *explicit_points;   /* $.base, $.axes,
                                             * $.variants, $.points as read
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

/* A point's settings, parsed from its key.  (transfer full) */
cJSON *hs_sweep_point_settings(const HsSweepPoint *p);

/* The `run` arguments of a point: {"run", "--format", "json", ...}.
 * (transfer full) */
GStrv hs_sweep_point_argv(const HsSweepPoint *p);

/* The SQL column of a setting: "npu.sram_kib" -> "npu_sram_kib". */
char *hs_sweep_column(const char *setting);

/*
 * The hash a point's row is kept by: lower-case hex SHA-256 of the compact
 * JSON {"config": <the run's config.hash>, "policy": P, "stack": <the
 * software stack the policy runs on, as loaded>} of its settings resolved
 * now (the files they name read again); *@config_hash (may be NULL) the
 * run's config.hash.  NULL, with @error, when they do not resolve (the
 * point fails before it runs).  (transfer full)
 */
char *hs_sweep_point_hash(const HsSweepPoint *p, char **config_hash, GError **error);

/* The `run` command line a point is ("hetero-sim run --format json --soc
 * npu2x.json ..."; each argument shell-quoted as needed): its row's
 * command column and its result's provenance.  (transfer full) */
char *hs_sweep_point_command(const HsSweepPoint *p);

/*
 * Run one point here and now: its record, the object a worker hands back
 *   {"key": K, "status": "ok"|"error", "error": E, "wall_s": W,
 *    "point_hash": H, "version": V, "command": C (hs_sweep_point_command),
 *    "result": <run --format json, minus sim.wall_s, with the point's own
 *               provenance>}
 * (transfer full).  Never fails: an error is recorded in it.  point_hash
 * is absent when the settings do not resolve.
 */
cJSON *hs_sweep_point_run(const HsSweepPoint *p);

/*
 * A worker: a forked child that runs point after point of one spec, so
 * what a process keeps (the encoded weights of engine/wcache.h, the
 * memory pool of sim/util/mem.h) serves the next point too; results
 * cannot depend on it (a cache hit gives the bits a make would; the
 * other process-wide setting, the engine's forced ISA, only `bench
 * engine` sets).  It sets
 * @threads OpenMP threads and tells the memory guard @concurrent points
 * share the machine, once.  The parent talks to it over one socket: a
 * point's index (an int) in, its record (hs_sweep_point_run, JSON text)
 * and a NUL out.  The parent's end closed, the worker exits.
 *
 * A worker that dies mid-point takes only that point with it: its record
 * says how the worker died, or there is none (NULL) if it was interrupted
 * (SIGINT, SIGTERM, SIGHUP: not recorded, so a resumed sweep runs it);
 * the next point gets a new worker.
 *
 * For the tests, HS_SWEEP_TEST_KILL=POINT:SIGNAL makes a worker given
 * point index POINT kill itself with SIGNAL before running it.
 */
typedef struct HsSweepWorker {
    int pid;                     /* -1: none running */
    int fd;                      /* the parent's end of the socket; -1: none */
    int point;                   /* the point it runs; -1: idle */
    GString *out;                /* its record so far */
} HsSweepWorker;

/* An empty worker slot (none running). */
#define HS_SWEEP_WORKER_INIT { -1, -1, -1, NULL }

/* Give @w point @point of @spec, starting a worker first if there is none
 * (or the one there died while idle).  @others (@n_others slots, may
 * include @w): their sockets are closed in a new worker, so each worker
 * sees its parent go.  Errors: HS_CONFIG_ERROR "sweep: cannot ...". */
gboolean hs_sweep_worker_give(HsSweepWorker *w, const HsSweepSpec *spec, int point,
                              int threads, unsigned concurrent, const HsSweepWorker *others,
                              int n_others, GError **error);
/* One read() of @w's socket (blocks unless poll() said it is readable).
 * FALSE: the record is not complete yet.  TRUE: the point is over, *rec
 * its record (transfer full), or NULL if it was interrupted; if the
 * worker died, it is reaped and @w has none. */
gboolean hs_sweep_worker_read(HsSweepWorker *w, const HsSweepSpec *spec, cJSON **rec);
/* Close @w's socket and reap its worker (which finishes a point it runs,
 * unrecorded); @w is then empty. */
void hs_sweep_worker_stop(HsSweepWorker *w);

/* --- database (sweep-db.c) --- */

/* PRAGMA application_id of a sweep database ("HSSW") and user_version,
 * its schema: 2 added point_hash, runs, claimed_by, claimed_at (a
 * database of schema 0 or 1 gets them when a sweep opens it). */
#define HS_SWEEP_APP_ID 0x48535357
#define HS_SWEEP_SCHEMA 2

/* Open or create @path (WAL journal), with a column per name in @names
 * (may be NULL); checked first (hs_sweep_db_check).  Errors:
 * HS_CONFIG_ERROR "@path: ...". */
sqlite3 *hs_sweep_db_open(const char *path, GPtrArray *names, GError **error);
/* Open an existing database to read (show, plot, list): never creates or
 * changes a file; checked.  Errors: HS_CONFIG_ERROR "@path: ...". */
sqlite3 *hs_sweep_db_open_read(const char *path, GError **error);
/* Is @db a sweep database to trust: PRAGMA quick_check passes, its
 * application_id and schema version are a sweep's, its tables have the
 * columns a sweep reads, every row's key is a JSON object and its status
 * ok, error or claimed.  @create: an empty database is accepted (to be
 * made one).  One-line errors "FILE: corrupt database, refused (...)". */
gboolean hs_sweep_db_check(sqlite3 *db, gboolean create, GError **error);

/* What a resumed sweep needs of a row. */
typedef struct HsSweepRow {
    char *status;                /* ok, error, claimed */
    char *point_hash, *version;  /* NULL if not recorded */
    char *claimed_by;            /* host:pid:start of the claim's process */
} HsSweepRow;
/* Every row by key (HsSweepRow *).  (transfer full) */
GHashTable *hs_sweep_db_rows(sqlite3 *db, GError **error);

/* The process a claim names: "host:pid:start" (start: ticks since boot,
 * /proc/PID/stat, so a recycled pid is not mistaken for it). */
char *hs_sweep_claimant(void);
typedef enum {
    HS_SWEEP_CLAIM_LIVE,         /* a running process of this host */
    HS_SWEEP_CLAIM_DEAD,         /* this host's, no longer running */
    HS_SWEEP_CLAIM_ELSEWHERE,    /* another host's: cannot tell */
} HsSweepClaim;
HsSweepClaim hs_sweep_claim_state(const char *claimed_by);

typedef struct HsSweepPolicy {
    const char *me;              /* hs_sweep_claimant() */
    gboolean retry_errors;       /* --retry-errors */
    gboolean reclaim;            /* --reclaim: another host's claims are dead */
} HsSweepPolicy;

/* A point's row against what the point is now. */
typedef enum {
    HS_SWEEP_NEW,                /* no row: run */
    HS_SWEEP_DONE,               /* fresh ok (or error, without --retry-errors) */
    HS_SWEEP_RETRY,              /* fresh error, --retry-errors: run */
    HS_SWEEP_STALE_CONFIG,       /* point_hash differs: run */
    HS_SWEEP_STALE_VERSION,      /* made by another version: run */
    HS_SWEEP_CLAIMED,            /* a live sweep runs it: leave it */
    HS_SWEEP_CLAIMED_DEAD,       /* its sweep died: run */
    HS_SWEEP_CLAIMED_ELSEWHERE,  /* another host's claim: leave it (--reclaim: run) */
} HsSweepState;
/* @row may be NULL; @hash_now: hs_sweep_point_hash(), may be NULL. */
HsSweepState hs_sweep_row_state(const HsSweepRow *row, const char *hash_now,
                                const HsSweepPolicy *pol);
gboolean hs_sweep_state_runs(HsSweepState s);

/* Claim point @key in one BEGIN IMMEDIATE transaction: its row read again
 * (*found), and if it is to run (hs_sweep_state_runs), stored as
 * status 'claimed' by pol->me (*claimed TRUE). */
gboolean hs_sweep_db_claim(sqlite3 *db, const char *key, int point, const char *hash_now,
                           const HsSweepPolicy *pol, HsSweepState *found, gboolean *claimed,
                           GError **error);
/* Drop @me's claim of @key (a point interrupted: the next sweep runs it). */
gboolean hs_sweep_db_release(sqlite3 *db, const char *key, const char *me, GError **error);
/* Store a record (one transaction), runs + 1; @point is its index in the
 * spec or -1. */
gboolean hs_sweep_db_insert(sqlite3 *db, const cJSON *record, int point, GError **error);

/* The metric columns are the report's measurement fields
 * (report-fields.h: hs_report_fields with metric TRUE), named and typed
 * as in CSV; a database made before a field was added gets its column
 * when it is opened to run.  --show prints the headline ones. */

/* --show: print the rows (text, csv or json) matching @where (SQL, may
 * be NULL): @columns (comma-separated settings or columns, may be NULL
 * for point, settings, status, headline metrics, error; @all adds the
 * rest). */
/* A --where condition with the dotted setting names of @db's settings
 * (npu.sram_kib) put as their columns' quoted names ("npu_sram_kib");
 * string literals and other words as written.  (transfer full) */
char *hs_sweep_db_where(sqlite3 *db, const char *where);

gboolean hs_sweep_db_show(sqlite3 *db, const char *where, const char *columns, int format,
                          gboolean all, FILE *out, GError **error);

/* A setting column's human label, with its unit ("npu.sram_kib (KiB)"). */
char *hs_sweep_label(const char *column);

/* --- parallel runs (sweep-run.c) --- */

typedef struct HsSweepRun {
    const HsSweepSpec *spec;
    sqlite3 *db;
    GArray *todo;                /* of int: point indices to run, if claimed */
    int jobs;
    gboolean progress;
    /* (zero: no hashes, claims as hs_sweep_claimant(), no retries) */
    char **hashes;               /* per point: hs_sweep_point_hash(), or NULL */
    guint8 *hashed;              /* per point: hashes[i] computed yet (NULL: all are) */
    HsSweepPolicy pol;
    guint next;                  /* first of todo not yet tried */
    /* what the claims found, for the summary */
    guint run_now, done_meanwhile, claimed_by_others, claimed_elsewhere, stale_config,
        stale_version, reclaimed;
} HsSweepRun;

/* What resuming @spec on @db finds: the hash now (hs_sweep_point_hash,
 * NULL where it does not resolve) of each point that has a row, to tell
 * a stale one (*@hashed marks them; the others' are computed when they
 * are claimed: a fresh grid starts at once), and the points to try to
 * claim, in order.  Free *@hashes with hs_sweep_hashes_free, *@hashed
 * with g_free.  (transfer full) */
GArray *hs_sweep_plan(const HsSweepSpec *spec, sqlite3 *db, const HsSweepPolicy *pol,
                      char ***hashes, guint8 **hashed, guint *done, GError **error);
/* @n hashes (NULL where a point does not resolve), then @h. */
void hs_sweep_hashes_free(char **h, guint n);

/* The next point of r->todo this process claims (hs_sweep_db_claim), or
 * -1 when none is left; -2 on a database error. */
int hs_sweep_run_next(HsSweepRun *r, GError **error);
/* Store @rec of point @point (runs + 1), its point_hash filled in from
 * r->hashes if the worker could not say; NULL @rec (interrupted): the
 * claim released. */
gboolean hs_sweep_run_store(HsSweepRun *r, cJSON *rec, int point, GError **error);

/* Run r->todo on r->jobs workers (hs_sweep_worker_give), each point
 * claimed first, storing each record as it arrives; a progress line on
 * stderr if r->progress. */
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
