/*
 * test-outputs.c - what hetero-sim's outputs do to what the user points
 * them at (devices, FIFOs, symbolic links, folders, the run's own inputs),
 * all-or-nothing multi-file outputs, the integer and byte parsing of the
 * command line, and the binary run as it is under valgrind.
 */
#include "cli-run.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define hs(...) hs_in(NULL, __VA_ARGS__)
/* ... with @locale as LC_ALL */
#define hs_locale(locale, ...) hs_env_in(NULL, "LC_ALL", (locale), __VA_ARGS__)

/* A fresh folder for one test; removed by rm_rf(). */
static char *
tmp_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("hs-out-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void
rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        const char *name;
        while (d && (name = g_dir_read_name(d)) != NULL) {
            g_autofree char *p = g_build_filename(path, name, NULL);
            rm_rf(p);
        }
        g_rmdir(path);
    } else {
        g_unlink(path);
    }
}

static gint
by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names in @dir, sorted, joined by spaces. */
static char *
listing(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        g_ptr_array_add(names, g_strdup(name));
    }
    g_ptr_array_sort(names, by_name);
    g_ptr_array_add(names, NULL);
    return g_strjoinv(" ", (char **) names->pdata);
}

/*
 * A character device like @sys (major, minor) at @dir/@name when we may
 * make one (root), so a regression replaces our copy, not the machine's
 * /dev/full; otherwise @sys itself (which a user may not replace anyway).
 */
static char *
char_device(const char *dir, const char *name, const char *sys)
{
    struct stat st;
    g_assert_cmpint(stat(sys, &st), ==, 0);
    char *p = g_build_filename(dir, name, NULL);
    if (mknod(p, S_IFCHR | 0666, st.st_rdev) == 0) {
        return p;
    }
    g_free(p);
    return g_strdup(sys);
}

static void
assert_char_device(const char *path, const char *sys)
{
    struct stat st, want;
    g_assert_cmpint(lstat(path, &st), ==, 0);
    g_assert_cmpint(stat(sys, &want), ==, 0);
    g_assert_true(S_ISCHR(st.st_mode));
    g_assert_cmpuint(st.st_rdev, ==, want.st_rdev);
}

#define RUN_SMALL "run", "--soc", "tiny", "--model", "tiny", "-p", "4", "-d", "1"

/* /dev/full: ENOSPC is a non-zero exit naming the file and the reason, and
 * the device is still a device afterwards (before: exit 0, /dev/full a
 * regular file).  For every kind of output. */
static void
test_dev_full(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *full = char_device(dir, "full", "/dev/full");
    g_autofree char *want = g_strdup_printf("%s: cannot write: %s", full, g_strerror(ENOSPC));

    g_autoptr(Run) a = hs(RUN_SMALL, "--trace", full, NULL);
    g_assert_cmpint(a->status, ==, 1);
    assert_one_error_line(a, want);
    assert_char_device(full, "/dev/full");

    g_autoptr(Run) b = hs(RUN_SMALL, "--record", full, NULL);
    g_assert_cmpint(b->status, ==, 1);
    g_assert_nonnull(strstr(b->err, want));
    g_assert_null(strchr(strchr(b->err, '\n') + 1, '\n'));   /* one line */
    assert_char_device(full, "/dev/full");

    g_autoptr(Run) c = hs("infer", "--model", "tiny", "--tokens", "1,2", "--steps", "1",
                          "--dump-logits", full, NULL);
    g_assert_cmpint(c->status, ==, 1);
    assert_one_error_line(c, want);
    assert_char_device(full, "/dev/full");

    g_autoptr(Run) d = hs("compare", "--soc", "tiny", "--model", "tiny", "-p", "4", "-d", "1",
                          "--trace", full, NULL);
    g_assert_cmpint(d->status, ==, 1);
    g_assert_nonnull(strstr(d->err, want));
    assert_char_device(full, "/dev/full");
    rm_rf(dir);
}

/* /dev/null takes the output and stays the null device. */
static void
test_dev_null(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *null = char_device(dir, "null", "/dev/null");
    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", null, "--record", null, NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpstr(r->err, ==, "");
    assert_char_device(null, "/dev/null");
    g_autofree char *tmp = listing(dir);
    g_assert_cmpstr(tmp, ==, g_str_has_prefix(null, dir) ? "null" : "");
    rm_rf(dir);
}

typedef struct Reader {
    int fd;                      /* the FIFO, opened O_NONBLOCK before the run */
    gint done;                   /* the run has exited */
    GString *got;
} Reader;

/* Read until the run has exited and the FIFO is drained: never blocks, so
 * a run that replaced the FIFO instead of writing it fails the test rather
 * than hanging it. */
static gpointer
read_fifo(gpointer data)
{
    Reader *rd = data;
    char buf[65536];
    for (;;) {
        gboolean last = g_atomic_int_get(&rd->done);
        ssize_t n;
        while ((n = read(rd->fd, buf, sizeof buf)) > 0) {
            g_string_append_len(rd->got, buf, n);
        }
        if (last) {
            return NULL;
        }
        g_usleep(1000);
    }
}

/* A FIFO with a reader gets the data and stays a FIFO (before: replaced by
 * a regular file, the reader waiting for ever). */
static void
test_fifo(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    Reader rd = { open(fifo, O_RDONLY | O_NONBLOCK), 0, g_string_new(NULL) };
    g_assert_cmpint(rd.fd, >=, 0);
    GThread *t = g_thread_new("reader", read_fifo, &rd);
    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", fifo, NULL);
    g_atomic_int_set(&rd.done, 1);
    g_thread_join(t);
    close(rd.fd);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_true(g_str_has_prefix(rd.got->str, "{"));
    g_assert_nonnull(strstr(rd.got->str, "\"traceEvents\""));
    g_assert_true(g_str_has_suffix(rd.got->str, "}\n"));
    struct stat st;
    g_assert_cmpint(lstat(fifo, &st), ==, 0);
    g_assert_true(S_ISFIFO(st.st_mode));
    g_string_free(rd.got, TRUE);
    rm_rf(dir);
}

/* A symbolic link stays a link; the file it names gets the new content
 * (replaced whole) and keeps its mode.  A dangling link makes its file. */
static void
test_symlink(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *sub = g_build_filename(dir, "sub", NULL);
    g_autofree char *target = g_build_filename(sub, "t.json", NULL);
    g_autofree char *link = g_build_filename(dir, "l.json", NULL);
    g_assert_cmpint(g_mkdir(sub, 0755), ==, 0);
    g_assert_true(g_file_set_contents(target, "old", -1, NULL));
    g_assert_cmpint(g_chmod(target, 0640), ==, 0);
    g_assert_cmpint(symlink("sub/t.json", link), ==, 0);     /* relative to its folder */

    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", link, NULL);
    g_assert_cmpint(r->status, ==, 0);
    struct stat st;
    g_assert_cmpint(lstat(link, &st), ==, 0);
    g_assert_true(S_ISLNK(st.st_mode));
    g_autofree char *to = g_file_read_link(link, NULL);
    g_assert_cmpstr(to, ==, "sub/t.json");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "\"traceEvents\""));
    g_assert_cmpint(stat(target, &st), ==, 0);
    g_assert_cmpint(st.st_mode & 07777, ==, 0640);
    g_autofree char *ls = listing(sub);
    g_assert_cmpstr(ls, ==, "t.json");               /* no temporary left */

    g_autofree char *dangling = g_build_filename(dir, "d.json", NULL);
    g_autofree char *made = g_build_filename(sub, "new.json", NULL);
    g_assert_cmpint(symlink("sub/new.json", dangling), ==, 0);
    g_autoptr(Run) d = hs(RUN_SMALL, "--record", dangling, NULL);
    g_assert_cmpint(d->status, ==, 0);
    g_assert_true(g_file_test(made, G_FILE_TEST_IS_REGULAR));
    g_assert_cmpint(lstat(dangling, &st), ==, 0);
    g_assert_true(S_ISLNK(st.st_mode));
    rm_rf(dir);
}

/* /dev/fd/1 (what /dev/stdout links to) is our standard output, written
 * through: the trace, then the report after it.  /dev/fd rather than
 * /dev/stdout, so that a regression cannot replace the machine's link. */
static void
test_fd_path(void)
{
    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", "/dev/fd/1", NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_cmpstr(r->err, ==, "");
    g_assert_true(g_str_has_prefix(r->out, "{\"traceEvents\":["));
    const char *report = strstr(r->out, "}\ntiny on tiny, policy hetero-tensor");
    g_assert_nonnull(report);
}

/* Two outputs onto one file: the first would be lost; refused. */
static void
test_output_twice(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *x = g_build_filename(dir, "x.json", NULL);
    g_autofree char *x2 = g_build_filename(dir, ".", "x.json", NULL);
    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", x, "--record", x2, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: is already an output of this run; expected "
                                            "a file of its own", x2);
    assert_one_error_line(r, want);
    g_autofree char *ls = listing(dir);
    g_assert_cmpstr(ls, ==, "");
    rm_rf(dir);
}

/* A folder, a missing folder: one clear line, exit 1. */
static void
test_directory(void)
{
    g_autofree char *dir = tmp_dir();
    g_autoptr(Run) r = hs(RUN_SMALL, "--trace", dir, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: is a directory; expected a file to write", dir);
    assert_one_error_line(r, want);

    g_autofree char *missing = g_build_filename(dir, "no", "such", "r.json", NULL);
    g_autoptr(Run) m = hs(RUN_SMALL, "--record", missing, NULL);
    g_assert_cmpint(m->status, ==, 1);
    g_autofree char *want_m = g_strdup_printf("%s: cannot create file: %s", missing,
                                              g_strerror(ENOENT));
    assert_one_error_line(m, want_m);
    rm_rf(dir);
}

static void
assert_unchanged(const char *path, const char *before, gsize len)
{
    g_autofree char *now = NULL;
    gsize n = 0;
    g_assert_true(g_file_get_contents(path, &now, &n, NULL));
    g_assert_cmpmem(now, n, before, len);
}

/* A file its owner made read-only is not replaced (the rename that makes
 * outputs whole asks only the folder), as root too; a writable one is,
 * keeping its mode. */
static void
test_read_only(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *x = g_build_filename(dir, "keep.json", NULL);
    g_assert_true(g_file_set_contents(x, "{}\n", -1, NULL));
    g_assert_cmpint(chmod(x, 0444), ==, 0);
    g_autoptr(Run) r = hs(RUN_SMALL, "--record", x, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: cannot write: %s (mode 0444); refusing to "
                                            "change it", x, g_strerror(EACCES));
    assert_one_error_line(r, want);
    assert_unchanged(x, "{}\n", 3);
    g_autofree char *ls = listing(dir);
    g_assert_cmpstr(ls, ==, "keep.json");

    g_assert_cmpint(chmod(x, 0640), ==, 0);
    g_autoptr(Run) w = hs(RUN_SMALL, "--record", x, NULL);
    g_assert_cmpint(w->status, ==, 0);
    struct stat st;
    g_assert_cmpint(stat(x, &st), ==, 0);
    g_assert_cmpuint(st.st_mode & 07777, ==, 0640);
    g_assert_cmpuint(st.st_size, >, 3);

    /* a sweep's database is written in place, not renamed: the same */
    g_autofree char *spec = g_build_filename(dir, "spec.json", NULL);
    g_assert_true(g_file_set_contents(spec, "{\"base\": {\"soc\": \"tiny\", \"model\": "
                                      "\"tiny\", \"prompt\": 4, \"decode\": 1}, \"axes\": "
                                      "{\"policy\": [\"gpu-only\"]}}", -1, NULL));
    g_autofree char *db = g_build_filename(dir, "keep.db", NULL);
    g_assert_true(g_file_set_contents(db, "", 0, NULL));
    g_assert_cmpint(chmod(db, 0444), ==, 0);
    g_autoptr(Run) d = hs("sweep", spec, "--db", db, NULL);
    g_assert_cmpint(d->status, ==, 1);
    g_autofree char *want_db = g_strdup_printf("%s: cannot write: %s (mode 0444); refusing to "
                                               "change it", db, g_strerror(EACCES));
    assert_one_error_line(d, want_db);
    assert_unchanged(db, "", 0);
    rm_rf(dir);
}

/* An output that is one of the run's inputs is refused before anything
 * runs, whatever name either goes by; the input keeps its bytes. */
static void
test_output_is_input(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *src = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "configs",
                                            "tiny.json", NULL);
    g_autofree char *soc = g_build_filename(dir, "soc.json", NULL);
    g_autofree char *alias = g_build_filename(dir, "alias.json", NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(src, &text, &len, NULL));
    g_assert_true(g_file_set_contents(soc, text, (gssize) len, NULL));
    g_assert_cmpint(symlink("soc.json", alias), ==, 0);

    g_autoptr(Run) a = hs("run", "--soc", soc, "--model", "tiny", "-p", "4", "-d", "1",
                          "--record", soc, NULL);
    g_assert_cmpint(a->status, ==, 1);
    g_assert_cmpstr(a->out, ==, "");
    g_autofree char *want = g_strdup_printf("%s: is an input of this run (%s); refusing to "
                                            "overwrite it", soc, soc);
    assert_one_error_line(a, want);
    assert_unchanged(soc, text, len);

    g_autoptr(Run) b = hs("run", "--soc", alias, "--model", "tiny", "-p", "4", "-d", "1",
                          "--trace", soc, NULL);
    g_assert_cmpint(b->status, ==, 1);
    g_autofree char *want_b = g_strdup_printf("%s: is an input of this run (%s); refusing "
                                              "to overwrite it", soc, alias);
    assert_one_error_line(b, want_b);
    assert_unchanged(soc, text, len);

    /* the stack as input, the output written after the work (refused
     * before it) */
    g_autofree char *stack_src = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "configs",
                                                  "stacks", "heterollm.json", NULL);
    g_autofree char *stack = g_build_filename(dir, "stack.json", NULL);
    g_autofree char *stext = NULL;
    gsize slen = 0;
    g_assert_true(g_file_get_contents(stack_src, &stext, &slen, NULL));
    g_assert_true(g_file_set_contents(stack, stext, (gssize) slen, NULL));
    g_autoptr(Run) c = hs("run", "--soc", "tiny", "--model", "tiny", "-p", "4", "-d", "1",
                          "--stack", stack, "--trace", stack, NULL);
    g_assert_cmpint(c->status, ==, 1);
    g_assert_nonnull(strstr(c->err, "is an input of this run"));
    assert_unchanged(stack, stext, slen);

    /* a model config.json as the logits dump */
    g_autofree char *msrc = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "models",
                                             "tiny.json", NULL);
    g_autofree char *model = g_build_filename(dir, "model.json", NULL);
    g_autofree char *mtext = NULL;
    gsize mlen = 0;
    g_assert_true(g_file_get_contents(msrc, &mtext, &mlen, NULL));
    g_assert_true(g_file_set_contents(model, mtext, (gssize) mlen, NULL));
    g_autoptr(Run) d = hs("infer", "--model", model, "--tokens", "1", "--dump-logits", model,
                          NULL);
    g_assert_cmpint(d->status, ==, 1);
    g_autofree char *want_d = g_strdup_printf("%s: is an input of this run (%s); refusing to "
                                              "overwrite it", model, model);
    assert_one_error_line(d, want_d);
    assert_unchanged(model, mtext, mlen);

    /* the recording replayed as the trace */
    g_autofree char *rec = g_build_filename(dir, "rec.json", NULL);
    g_autoptr(Run) e = hs(RUN_SMALL, "--record", rec, NULL);
    g_assert_cmpint(e->status, ==, 0);
    g_autofree char *rtext = NULL;
    gsize rlen = 0;
    g_assert_true(g_file_get_contents(rec, &rtext, &rlen, NULL));
    g_autoptr(Run) f = hs("replay", rec, "--trace", rec, NULL);
    g_assert_cmpint(f->status, ==, 1);
    g_assert_nonnull(strstr(f->err, "is an input of this run"));
    assert_unchanged(rec, rtext, rlen);
    rm_rf(dir);
}

/* probe --what all --out DIR: a curve that cannot be written leaves no
 * other curve's files behind (before: the curves before it written). */
static void
test_probe_all_or_nothing(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *out = g_build_filename(dir, "curves", NULL);
    g_autofree char *blocker = g_build_filename(out, "sync.csv", NULL);
    g_assert_cmpint(g_mkdir_with_parents(blocker, 0755), ==, 0);
    g_autoptr(Run) r = hs("probe", "--what", "all", "--out", out, NULL);
    g_assert_cmpint(r->status, ==, 1);
    g_autofree char *want = g_strdup_printf("%s: is a directory; expected a file to write",
                                            blocker);
    assert_one_error_line(r, want);
    g_assert_cmpstr(r->out, ==, "");
    g_autofree char *ls = listing(out);
    g_assert_cmpstr(ls, ==, "sync.csv");

    g_assert_cmpint(g_rmdir(blocker), ==, 0);
    g_autoptr(Run) ok = hs("probe", "--what", "all", "--out", out, NULL);
    g_assert_cmpint(ok->status, ==, 0);
    g_autofree char *line = g_strdup_printf("wrote %s/sync.csv\n", out);
    g_assert_nonnull(strstr(ok->out, line));
    g_autofree char *sync = g_build_filename(out, "sync.svg", NULL);
    g_assert_true(g_file_test(sync, G_FILE_TEST_IS_REGULAR));
    rm_rf(dir);
}

/* Integers are decimal: -p 010 is a prompt of 10 (GLib's base 0 made it 8),
 * 0x10 is refused. */
static void
test_decimal(void)
{
    g_autoptr(Run) a = hs(RUN_SMALL, "-p", "010", "-f", "json", NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_nonnull(strstr(a->out, "\"prompt_tokens\":10,"));
    g_autoptr(Run) b = hs(RUN_SMALL, "--prompt=010", "-f", "json", NULL);
    g_assert_cmpint(b->status, ==, 0);
    g_assert_nonnull(strstr(b->out, "\"prompt_tokens\":10,"));
    g_autoptr(Run) c = hs(RUN_SMALL, "--seed", "010", "-f", "json", NULL);
    g_assert_cmpint(c->status, ==, 0);
    g_assert_nonnull(strstr(c->out, "synthetic seed 10\""));
    g_autoptr(Run) d = hs(RUN_SMALL, "-p", "0x10", NULL);
    g_assert_cmpint(d->status, ==, 2);
    assert_one_error_line(d, "run: --prompt: expected an integer (got \"0x10\")");
}

static void
test_bad_numbers(void)
{
    g_autoptr(Run) a = hs("sweep", "nonexistent.json", "--point=-1", NULL);
    g_assert_cmpint(a->status, ==, 2);
    assert_one_error_line(a, "--point: expected a point number, an integer from 0 "
                             "(got \"-1\")");
    g_autoptr(Run) b = hs("sweep", "nonexistent.json", "--point", "-1", NULL);
    g_assert_cmpint(b->status, ==, 2);
    g_autoptr(Run) c = hs("infer", "--model", "tiny", "--tokens", "", NULL);
    g_assert_cmpint(c->status, ==, 2);
    assert_one_error_line(c, "--tokens: expected comma-separated token ids in [0, 256) "
                             "(got \"\")");
}

/* File names are bytes: under LC_ALL=C a path with \xc3\xa9 and \xff works
 * (GLib's "Invalid byte sequence in conversion input" before), and a --set
 * value with such bytes gets our own message. */
static void
test_bytes(void)
{
    g_autofree char *dir = tmp_dir();
    g_autofree char *src = g_build_filename(g_getenv("HS_SOURCE_ROOT"), "configs",
                                            "tiny.json", NULL);
    g_autofree char *soc = g_build_filename(dir, "soc-\xc3\xa9\xff.json", NULL);
    g_autofree char *trace = g_build_filename(dir, "trace-\xc3\xa9\xff.json", NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(src, &text, NULL, NULL));
    g_assert_true(g_file_set_contents(soc, text, -1, NULL));

    g_autoptr(Run) a = hs_locale("C", "run", "--soc", soc, "--model", "tiny", "-p", "4", "-d",
                                 "1", "--trace", trace, NULL);
    g_assert_cmpint(a->status, ==, 0);
    g_assert_cmpstr(a->err, ==, "");
    g_assert_true(g_file_test(trace, G_FILE_TEST_IS_REGULAR));

    g_autoptr(Run) b = hs_locale("C", "probe", "--what", "membw", "--soc", soc, NULL);
    g_assert_cmpint(b->status, ==, 0);

    g_autoptr(Run) c = hs_locale("C", RUN_SMALL, "--set", "memory.peak_gbps=\xc3\xa9\xff",
                                 NULL);
    g_assert_cmpint(c->status, !=, 0);
    g_assert_null(strstr(c->err, "Invalid byte sequence"));
    g_assert_true(g_str_has_prefix(c->err, "hetero-sim: --set memory.peak_gbps="));
    rm_rf(dir);
}

/* valgrind runs the binary as it is (before: the re-exec through
 * /proc/self/exe ran valgrind's tool, which refused: "You cannot run ...
 * directly"), with no memcheck error on a small checked run. */
static void
test_valgrind(void)
{
    g_autofree char *vg = g_find_program_in_path("valgrind");
    if (vg == NULL) {
        g_test_skip("valgrind not installed (apt-get install valgrind)");
        return;
    }
    if (g_strcmp0(g_getenv("HS_SANITIZED"), "1") == 0) {
        /* ASan's shadow memory and valgrind's cannot share a process */
        g_test_skip("a sanitizer build: valgrind cannot run it");
        return;
    }
    const char *argv[] = { vg, "-q", "--error-exitcode=99", g_getenv("HS_BIN"), RUN_SMALL,
                           NULL };
    g_autoptr(Run) r = cli_spawn(NULL, (char *const *) argv, NULL);
    g_assert_cmpint(r->status, ==, 0);
    g_assert_null(strstr(r->err, "cannot run"));
    g_assert_nonnull(strstr(r->out, "values: hidden states match"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/outputs/dev-full", test_dev_full);
    g_test_add_func("/outputs/dev-null", test_dev_null);
    g_test_add_func("/outputs/fifo", test_fifo);
    g_test_add_func("/outputs/symlink", test_symlink);
    g_test_add_func("/outputs/fd-path", test_fd_path);
    g_test_add_func("/outputs/output-twice", test_output_twice);
    g_test_add_func("/outputs/directory", test_directory);
    g_test_add_func("/outputs/output-is-input", test_output_is_input);
    g_test_add_func("/outputs/read-only", test_read_only);
    g_test_add_func("/outputs/probe-all-or-nothing", test_probe_all_or_nothing);
    g_test_add_func("/outputs/decimal", test_decimal);
    g_test_add_func("/outputs/bad-numbers", test_bad_numbers);
    g_test_add_func("/outputs/bytes", test_bytes);
    g_test_add_func("/outputs/valgrind", test_valgrind);
    return g_test_run();
}
