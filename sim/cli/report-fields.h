/*
 * report-fields.h - the scalar fields of a run's report, described once:
 * the CSV column (`run --format csv`), the same name as a sweep
 * database's column, where the value sits in `run --format json`, and
 * its label with its unit for plots.
 *
 * CSV and the sweep's SQL columns are written from this table;
 * hs_run_report_json (run-opts.c) still builds the JSON by hand, and a
 * test (tests/cli/test-sweep.c, report-fields) checks every field's JSON
 * path holds the value its CSV column prints.
 */
#ifndef HS_REPORT_FIELDS_H
#define HS_REPORT_FIELDS_H

#include <glib.h>

#include "sim/run.h"

typedef enum {
    HS_FIELD_NAME,          /* a string: soc, model, policy, sync */
    HS_FIELD_COUNT,         /* an unsigned integer */
    HS_FIELD_REAL,          /* a measurement, a double */
} HsFieldType;

typedef struct HsReportField {
    const char *name;       /* CSV and SQL column: "prefill_tokens_per_s" */
    const char *json_path;  /* in run --format json: "prefill.tokens_per_s" */
    HsFieldType type;
    const char *csv_format; /* HS_FIELD_REAL: printf format of the CSV cell */
    const char *label;      /* "prefill tokens/s": plot axes, with the unit */
    gboolean metric;        /* a measurement (a sweep row's column), not the workload */
    size_t offset;          /* REAL: a double in SimRunReport; COUNT: a uint32_t */
} HsReportField;

/* Every field, in CSV column order; ends with name NULL. */
extern const HsReportField hs_report_fields[];

/* A field's value as a CSV cell.  (transfer full) */
char *hs_report_field_text(const HsReportField *f, const SimRunReport *r);

/* A REAL field's value. */
double hs_report_field_value(const HsReportField *f, const SimRunReport *r);

/* The field called @name, or NULL. */
const HsReportField *hs_report_field_find(const char *name);

#endif /* HS_REPORT_FIELDS_H */
