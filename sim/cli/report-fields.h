/*
 * report-fields.h - every field of a run's report, described once: its
 * CSV column (`run --format csv`), which is also a sweep database's
 * column, its place in `run --format json`, its place in the text report
 * and its label with its unit for plots.
 *
 * The text, JSON and CSV reports (report-format.c) and the sweep's SQL
 * columns (sweep-db.c) are all written from this table, so a field added
 * here appears in all four.  Tests (tests/cli/test-sweep.c, report-fields*)
 * check each field's JSON path holds the value its CSV column prints and
 * that every field has a place in the text.
 */
#ifndef HS_REPORT_FIELDS_H
#define HS_REPORT_FIELDS_H

#include <glib.h>

#include "hw/soc.h"
#include "sim/run.h"
#include "sim/util/json.h"

typedef enum {
    HS_FIELD_NAME,          /* a string, from the field's name_of() */
    HS_FIELD_COUNT,         /* a uint32_t */
    HS_FIELD_U64,           /* a uint64_t */
    HS_FIELD_REAL,          /* a double */
    HS_FIELD_BOOL,          /* a gboolean */
    HS_FIELD_PER_PROC,      /* a double per processor (a double * member):
                             * JSON only, "*" in its path is the device name;
                             * no CSV or SQL column, as the set of columns
                             * would depend on the SoC */
} HsFieldType;

/* When a field has a value (JSON member present, CSV cell not empty). */
typedef enum {
    HS_WHEN_ALWAYS,
    HS_WHEN_HOT,            /* the prefill ran kernels (a heaviest op) */
    HS_WHEN_CHECKED,        /* the values were checked */
    HS_WHEN_RENDER,         /* a game rendered alongside */
    HS_WHEN_CAVEAT,         /* some figure is an assumption (caveats) */
    HS_WHEN_DECODE,         /* text only: decode steps were run */
    HS_WHEN_NONZERO,        /* text only: the value is not 0 */
    HS_WHEN_NEVER,          /* text only: not printed (see the field's text_in) */
} HsFieldWhen;

typedef struct HsReportField HsReportField;

/* Appends a field's part of the text report (see text_fn). */
typedef void (*HsFieldTextFn)(GString *out, const HsReportField *f, const HwSoc *soc,
                              const SimRunReport *r);

struct HsReportField {
    const char *name;       /* CSV and SQL column: "prefill_tokens_per_s" */
    const char *json_path;  /* in run --format json: "prefill.tokens_per_s" */
    HsFieldType type;
    const char *csv_format; /* REAL: printf format of the CSV cell */
    const char *label;      /* "prefill tokens/s": plot axes, with the unit */
    gboolean metric;        /* a measurement: a sweep row's SQL column; FALSE
                             * for what describes the request (settings) */
    size_t offset;          /* of the value in SimRunReport (not NAME) */
    char *(*name_of)(const SimRunReport *r);    /* NAME: (transfer full) */
    HsFieldWhen when;
    /* The text report: printed in order of text_at (line * 100 + place;
     * a new line when the line changes), as text_format with the value,
     * or by text_fn; text_when as when.  A field whose value is told in
     * another field's sentence names that field in text_in instead. */
    unsigned text_at;
    const char *text_format;
    HsFieldTextFn text_fn;
    HsFieldWhen text_when;
    const char *text_in;
    gboolean headline;      /* a metric `sweep --show` prints by default */
};

/* Every field, in JSON member order (also the CSV column order); ends
 * with name NULL. */
extern const HsReportField hs_report_fields[];

/* Does @f have a value in @r (its `when`)? */
gboolean hs_report_field_present(const HsReportField *f, const SimRunReport *r);

/* A field's value as a CSV cell, "" if absent.  (transfer full) */
char *hs_report_field_text(const HsReportField *f, const SimRunReport *r);

/* Where @f's value sits in @r (not NAME). */
const void *hs_report_field_ptr(const HsReportField *f, const SimRunReport *r);

/* A REAL field's value. */
double hs_report_field_value(const HsReportField *f, const SimRunReport *r);

/* The field called @name, or NULL. */
const HsReportField *hs_report_field_find(const char *name);

/* Does @f have a CSV (and SQL) column? */
gboolean hs_report_field_is_column(const HsReportField *f);

/* The SQL type of @f's column: TEXT, INTEGER or REAL. */
const char *hs_report_field_sql_type(const HsReportField *f);

/* --- report-format.c --- */

/* The whole report as JSON (the schema documented in README.md).
 * (transfer full) */
cJSON *hs_report_json(const HwSoc *soc, const SimRunReport *r);

/* The whole report as text, ending with a newline.  (transfer full) */
char *hs_report_text(const HwSoc *soc, const SimRunReport *r);

/* The CSV header line and a run's row, each ending with a newline.
 * (transfer full) */
char *hs_report_csv_header(void);
char *hs_report_csv_row(const SimRunReport *r);

/* "ffn_down (45 % of prefill kernel time) split gpu 38 %, npu 62 %", or
 * NULL if the prefill ran no kernels.  (transfer full) */
char *hs_run_hot_op_text(const HwSoc *soc, const SimRunReport *r);

#endif /* HS_REPORT_FIELDS_H */
