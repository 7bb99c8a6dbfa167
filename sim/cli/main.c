/*
 * main.c - the hetero-sim command line: `hetero-sim <command> [options]`.
 *
 * One table of commands, each in its own cmd-<name>.c.  Errors are
 * reported here and only here: "hetero-sim: <message>" on stderr, exit 2
 * for usage errors, 3 for a run whose checked values (or plan) are wrong
 * (HS_SIM_ERROR_MISMATCH, after its report) and 1 for bad input or a
 * failed simulation.
 */
#include "engine/wcache.h"
#include "sim/cli/cli.h"
#include "sim/util/nearest.h"
#include "sim/util/error.h"
#include "sim/util/version-info.h"
#include "sim/util/escape.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const HsCommand hs_cmd_run;
extern const HsCommand hs_cmd_compare;
extern const HsCommand hs_cmd_replay;
extern const HsCommand hs_cmd_probe;
extern const HsCommand hs_cmd_infer;
extern const HsCommand hs_cmd_validate;
extern const HsCommand hs_cmd_list;
extern const HsCommand hs_cmd_soc;
extern const HsCommand hs_cmd_stack;
extern const HsCommand hs_cmd_bench;
extern const HsCommand hs_cmd_explain;
extern const HsCommand hs_cmd_sweep;
extern const HsCommand hs_cmd_calibrate;
extern const HsCommand hs_cmd_plot;

static const HsCommand *const commands[] = {
    &hs_cmd_run,
    &hs_cmd_compare,
    &hs_cmd_replay,
    &hs_cmd_probe,
    &hs_cmd_explain,
    &hs_cmd_validate,
    &hs_cmd_sweep,
    &hs_cmd_calibrate,
    &hs_cmd_plot,
    &hs_cmd_infer,
    &hs_cmd_list,
    &hs_cmd_soc,
    &hs_cmd_stack,
    &hs_cmd_bench,
};

/* What runs when no command is given (the embedded defaults). */
static const char *const default_argv[] = { "compare", NULL };

/*
 * OpenMP threads that wait passively.  libgomp's default spins a waiting
 * thread for 300,000 iterations after every parallel region; the values
 * check runs thousands of short regions between stretches of serial
 * simulation, so on a machine whose cores are shared the spinning threads
 * took a quarter of the CPU time of the default compare (perf: libgomp
 * spin-wait 26 %) and slowed the thread doing the work.  libgomp reads
 * its settings once, when it is loaded (setting them from main() or from
 * a .preinit_array function is too late with GCC 12's libgomp: it reads
 * the loader's copy of the environment), so the program runs itself again
 * with OMP_WAIT_POLICY=PASSIVE, unless the user chose a wait policy or a
 * spin count.  Values do not depend on it (every iteration writes only its
 * own outputs).  If the program cannot be run again it goes on as it is.
 * A command that runs no OpenMP region is not run again: starting costs
 * ~22 ms of CPU, so a timing-only run (`--functional off`) and the
 * commands that never compute a value (validate, list, probe, soc, stack,
 * plot) start once.  (OpenBLAS, whose thread pool once made every run
 * start again, is opened only when a product needs it: engine/blas.c.)
 *
 * libgomp has no call that changes the wait policy or GOMP_SPINCOUNT once
 * loaded (both are read only by its constructor), so the run again stays;
 * but only when it is safe: not with HS_NO_REEXEC set, not under a tracer
 * (gdb, strace: TracerPid in /proc/self/status; a debugger would follow
 * the exec and lose its breakpoints), and only when /proc/self/exe is this
 * program.  It is not under valgrind (/proc/self/exe is the tool,
 * memcheck-amd64-linux, which refuses to be run directly) nor when the
 * program is started through the dynamic loader (`ld-linux.so prog`):
 * there the code of main() is mapped from a file other than the one
 * /proc/self/exe names.
 */
int main(int argc, char **argv);

static gboolean
traced(void)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL)) {
        return FALSE;
    }
    const char *t = strstr(status, "\nTracerPid:");
    return t && strtol(t + strlen("\nTracerPid:"), NULL, 10) != 0;
}

/* The file main() is mapped from is the one /proc/self/exe is.  Compared
 * by stat(), not by name: valgrind answers readlink("/proc/self/exe") with
 * the program's name, yet exec of it runs the tool. */
static gboolean
exe_is_self(void)
{
    struct stat exe;
    g_autofree char *maps = NULL;
    if (stat("/proc/self/exe", &exe) != 0 ||
        !g_file_get_contents("/proc/self/maps", &maps, NULL, NULL)) {
        return FALSE;
    }
    uintptr_t here = (uintptr_t) &main;
    for (char *line = maps, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) {
            *next++ = '\0';
        }
        /* "start-end perms offset dev inode   path" */
        char *end = NULL;
        uintptr_t lo = (uintptr_t) g_ascii_strtoull(line, &end, 16);
        uintptr_t hi = end && *end == '-' ? (uintptr_t) g_ascii_strtoull(end + 1, NULL, 16) : 0;
        if (here < lo || here >= hi) {
            continue;
        }
        const char *path = strchr(line, '/');
        struct stat self;
        return path && stat(path, &self) == 0 && self.st_dev == exe.st_dev &&
               self.st_ino == exe.st_ino;
    }
    return FALSE;
}

/* Whether the command line can run OpenMP regions (compute values).  A
 * wrong yes costs a second start, a wrong no spinning threads: neither
 * changes a result. */
static gboolean
computes_values(int argc, char **argv)
{
    static const char *const none[] = {
        "--help", "-h", "help", "--version", "validate", "list", "probe", "soc", "stack", "plot",
    };
    for (size_t i = 0; argc >= 2 && i < G_N_ELEMENTS(none); i++) {
        if (strcmp(argv[1], none[i]) == 0) {
            return FALSE;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--functional=off") == 0 ||
            (strcmp(argv[i], "--functional") == 0 && i + 1 < argc &&
             strcmp(argv[i + 1], "off") == 0)) {
            return FALSE;
        }
    }
    return TRUE;
}

static void
passive_omp(int argc, char **argv)
{
    if (g_getenv("OMP_WAIT_POLICY") || g_getenv("GOMP_SPINCOUNT")) {
        return;                  /* the user's choice, or already run again */
    }
    if (!computes_values(argc, argv) || g_getenv("HS_NO_REEXEC") || traced() ||
        !exe_is_self()) {
        return;
    }
    g_setenv("OMP_WAIT_POLICY", "PASSIVE", FALSE);
    execv("/proc/self/exe", argv);
    g_unsetenv("OMP_WAIT_POLICY");
}

static void
usage(FILE *out)
{
    fprintf(out,
            "Usage: hetero-sim <command> [options]\n"
            "\n"
            "Discrete-event, cycle-approximate simulator of a mobile SoC\n"
            "(CPU, GPU, NPU, shared DRAM) running LLM inference.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        g_autofree char *head = g_strdup_printf("%s %s", commands[i]->name,
                                                commands[i]->args);
        fprintf(out, "  %-30s %s\n", head, commands[i]->summary);
    }
    fprintf(out,
            "\n"
            "Run 'hetero-sim <command> --help' for a command's options.\n"
            "With no command, hetero-sim runs: hetero-sim");
    for (size_t i = 0; default_argv[i]; i++) {
        fprintf(out, " %s", default_argv[i]);
    }
    fprintf(out, "\n");
}

int
main(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    g_auto(GStrv) args = NULL;

    passive_omp(argc, argv);
    g_set_prgname("hetero-sim");              /* "Usage: hetero-sim [OPTION…] run" */

    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("hetero-sim %s\n", hs_version());
        return 0;
    }
    if (argc < 2) {
        args = g_strdupv((char **) default_argv);
    } else {
        args = g_strdupv(argv + 1);
    }

    int cargc = (int) g_strv_length(args);
    const HsCommand *cmd = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        if (strcmp(commands[i]->name, args[0]) == 0) {
            cmd = commands[i];
        }
    }
    if (cmd == NULL) {
        if (args[0][0] == '-') {
            fprintf(stderr, "hetero-sim: unknown option \"%s\" (see 'hetero-sim --help')\n",
                    args[0]);
        } else {
            const char *names[G_N_ELEMENTS(commands) + 1] = { NULL };
            for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
                names[i] = commands[i]->name;
            }
            const char *near = hs_nearest(args[0], names);
            g_autofree char *hint = near ? g_strdup_printf("did you mean %s? ", near) : NULL;
            fprintf(stderr, "hetero-sim: unknown command \"%s\" (%ssee 'hetero-sim --help')\n",
                    args[0], hint ? hint : "");
        }
        return 2;
    }

    /* the weight cache's budget (engine/wcache.h): a bad value is refused
     * before anything runs */
    if (!eng_wcache_init(&error)) {
        fprintf(stderr, "hetero-sim: %s\n", error->message);
        return 1;
    }

    /* GOption may permute and shorten the vector; keep the owner intact. */
    g_autofree char **view = g_memdup2(args, sizeof(char *) * (cargc + 1));
    if (!cmd->run(cargc, view, &error)) {
        g_assert(error != NULL);
        fflush(stdout);
        hs_cli_suggest(error);
        g_autofree char *msg = hs_escape_message(error->message);
        fprintf(stderr, "hetero-sim: %s\n", msg);
        return error->domain == HS_USAGE_ERROR ? 2
               : g_error_matches(error, HS_SIM_ERROR, HS_SIM_ERROR_MISMATCH) ? 3 : 1;
    }
    g_assert(error == NULL);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "hetero-sim: cannot write to standard output\n");
        return 1;
    }
    return 0;
}
