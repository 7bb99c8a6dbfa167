/*
 * harness.h - the one libFuzzer entry point every fuzz target shares.
 *
 * A target is one file with one function that feeds the bytes to the SAME
 * loader the CLI uses, in process:
 *
 *   static gboolean load(const uint8_t *data, size_t size, GError **error)
 *   { ... return ok; }
 *   HS_FUZZ_TARGET(load)
 *
 * and one name in fuzz/meson.build's `fuzz_targets`.  The harness turns the
 * project's promise about bad input into checks libFuzzer sees as crashes:
 * a rejected input must carry an error, and its message must be one
 * non-empty line of valid UTF-8 (no forged "hetero-sim:" second line, no raw
 * bytes for the terminal).  Crashes, leaks and sanitizer reports are
 * libFuzzer's and ASan/UBSan's own.
 */
#ifndef HS_FUZZ_HARNESS_H
#define HS_FUZZ_HARNESS_H

#include "sim/util/escape.h"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef gboolean (*HsFuzzLoadFn)(const uint8_t *data, size_t size, GError **error);

/* @as_printed: check the message as main() prints it (hs_escape_message),
 * for loaders in folders that still echo input raw (see fuzz-soc.c). */
static inline int
hs_fuzz_run(HsFuzzLoadFn load, const uint8_t *data, size_t size, gboolean as_printed)
{
    GError *error = NULL;
    gboolean ok = load(data, size, &error);
    if (ok && error != NULL) {
        g_printerr("fuzz: success with an error set: %s\n", error->message);
        abort();
    }
    if (!ok) {
        if (error == NULL || error->message == NULL || error->message[0] == '\0') {
            g_printerr("fuzz: input refused without a message\n");
            abort();
        }
        g_autofree char *msg = as_printed ? hs_escape_message(error->message)
                                          : g_strdup(error->message);
        if (strchr(msg, '\n') || strchr(msg, '\r') || !g_utf8_validate(msg, -1, NULL)) {
            g_printerr("fuzz: message is not one line of UTF-8: %s\n", msg);
            abort();
        }
        g_error_free(error);
    }
    return 0;
}

#define HS_FUZZ_TARGET_MODE(fn, as_printed)                                   \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);             \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)              \
    {                                                                         \
        return hs_fuzz_run((fn), data, size, (as_printed));                   \
    }
#define HS_FUZZ_TARGET(fn) HS_FUZZ_TARGET_MODE(fn, FALSE)

#endif /* HS_FUZZ_HARNESS_H */
