/*
 * escape.c - see escape.h.
 */
#include "sim/util/escape.h"

#include <string.h>

static char *
escape(const char *s, gsize len, gsize max, gboolean backslash)
{
    if (s == NULL) {
        return g_strdup("(null)");
    }
    GString *o = g_string_sized_new(len + 8);
    gsize n = MIN(len, max);
    const char *p = s, *end = s + n;
    while (p < end) {
        guchar c = (guchar) *p;
        if (c < 0x80) {
            switch (c) {
            case '\n': g_string_append(o, "\\n"); break;
            case '\r': g_string_append(o, "\\r"); break;
            case '\t': g_string_append(o, "\\t"); break;
            case '\\':
                g_string_append(o, backslash ? "\\\\" : "\\");
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    g_string_append_printf(o, "\\x%02x", c);
                } else {
                    g_string_append_c(o, (char) c);
                }
            }
            p++;
            continue;
        }
        gunichar u = g_utf8_get_char_validated(p, end - p);
        if (u == (gunichar) -1 || u == (gunichar) -2) {
            g_string_append_printf(o, "\\x%02x", c);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        if (g_unichar_iscntrl(u) || u == 0x2028 || u == 0x2029) {
            /* C1 controls and Unicode line separators */
            g_string_append_printf(o, "\\u%04x", u);
        } else {
            g_string_append_len(o, p, next - p);
        }
        p = next;
    }
    if (len > n) {
        g_string_append(o, "...");
    }
    return g_string_free(o, FALSE);
}

char *
hs_escape_len(const char *s, gsize len)
{
    return escape(s, len, HS_ESCAPE_MAX_BYTES, TRUE);
}

char *
hs_escape_message(const char *msg)
{
    return escape(msg, msg ? strlen(msg) : 0, G_MAXSIZE, FALSE);
}

char *
hs_escape(const char *s)
{
    return hs_escape_len(s, s ? strlen(s) : 0);
}
