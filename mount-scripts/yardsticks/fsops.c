/* fsops — times the file operations a person performs on a key-value mount
 * (make a key, rewrite it, read it twice, stat it, list the folder, remove
 * it), each a direct system call, so that starting a process (as `echo` or
 * `cat` would) does not hide what the filesystem itself costs.
 *
 *   fsops DIR [KEYS=500] [VALUE_BYTES=64] [ROUNDS=5]
 *
 * DIR must be empty, and is empty again afterwards. Each round runs every
 * phase over KEYS keys named key00000, key00001, ...; the listing phase lists
 * DIR once. Output: one line per phase,
 *
 *   <phase>  <operations> ops  <median ns per operation> ns/op (median of <ROUNDS>)
 *
 * which mount-scripts/benchmark.sh reads. For an even ROUNDS the upper of the
 * two middle rounds is printed.
 *
 * Built by mount-scripts/benchmark.sh: cc -O2 -Wall fsops.c -o fsops */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *folder;
static int value_bytes;
static char *value, *scratch;   /* what is written; where reads land */

static void fail(const char *call, const char *path) {
    fprintf(stderr, "fsops: %s %s: ", call, path);
    perror(NULL);
    exit(1);
}

static const char *key_path(int key) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/key%05d", folder, key);
    return path;
}

static void write_key(int key, int flags) {
    const char *path = key_path(key);
    int fd = open(path, O_WRONLY | O_TRUNC | flags, 0644);
    if (fd < 0) fail("open", path);
    if (write(fd, value, value_bytes) != value_bytes) fail("write", path);
    if (close(fd) != 0) fail("close", path);   /* where a key-value mount commits */
}

static void create_key(int key) { write_key(key, O_CREAT); }
static void overwrite_key(int key) { write_key(key, 0); }

static void read_key(int key) {
    const char *path = key_path(key);
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail("open", path);
    /* At least what was written: a key-value mount may show a canonical form
     * of it (kvfs shows 64 bytes of text as a string, with a newline). */
    if (read(fd, scratch, value_bytes + 4096) < value_bytes) fail("read", path);
    close(fd);
}

static void stat_key(int key) {
    struct stat st;
    if (stat(key_path(key), &st) != 0) fail("stat", key_path(key));
}

static void unlink_key(int key) {
    if (unlink(key_path(key)) != 0) fail("unlink", key_path(key));
}

/* The listing is one operation: it must find every key. */
static void list_folder(int keys) {
    DIR *dir = opendir(folder);
    if (!dir) fail("opendir", folder);
    int found = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
        found += strncmp(entry->d_name, "key", 3) == 0;
    closedir(dir);
    if (found < keys) {
        fprintf(stderr, "fsops: readdir of %s found %d of %d keys\n", folder, found, keys);
        exit(1);
    }
}

static double nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The phases in the order they run: a later phase needs what an earlier one
 * left (reads need the keys, the second read a warm cache, unlink the keys). */
static const struct phase {
    const char *name;
    void (*each_key)(int key);   /* NULL: the phase is one listing */
} phases[] = {
    { "create+write+close", create_key },
    { "overwrite(O_TRUNC)+close", overwrite_key },
    { "open+read+close", read_key },
    { "open+read+close (again)", read_key },
    { "stat", stat_key },
    { "readdir(all keys)", NULL },
    { "unlink", unlink_key },
};
enum { phase_count = sizeof phases / sizeof phases[0] };

int main(int argc, char **argv) {
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: fsops DIR [KEYS] [VALUE_BYTES] [ROUNDS]\n");
        return 2;
    }
    folder = argv[1];
    int keys = argc > 2 ? atoi(argv[2]) : 500;
    value_bytes = argc > 3 ? atoi(argv[3]) : 64;
    int rounds = argc > 4 ? atoi(argv[4]) : 5;
    if (keys < 1 || value_bytes < 1 || rounds < 1) {
        fprintf(stderr, "fsops: KEYS, VALUE_BYTES and ROUNDS must be at least 1\n");
        return 2;
    }
    value = malloc(value_bytes);
    scratch = malloc(value_bytes + 4096);
    double *samples = calloc((size_t)phase_count * rounds, sizeof *samples);
    if (!value || !scratch || !samples) fail("malloc", "");
    memset(value, 'v', value_bytes);

    for (int round = 0; round < rounds; round++) {
        for (int p = 0; p < phase_count; p++) {
            double start = nanoseconds();
            if (phases[p].each_key)
                for (int key = 0; key < keys; key++) phases[p].each_key(key);
            else
                list_folder(keys);
            double per_operation = (nanoseconds() - start) / (phases[p].each_key ? keys : 1);
            samples[p * rounds + round] = per_operation;
        }
    }

    for (int p = 0; p < phase_count; p++) {
        double *phase_samples = samples + p * rounds;
        qsort(phase_samples, rounds, sizeof *phase_samples, ascending);
        printf("%-26s %6d ops  %10.0f ns/op (median of %d)\n", phases[p].name,
               phases[p].each_key ? keys : 1, phase_samples[rounds / 2], rounds);
    }
    return 0;
}
