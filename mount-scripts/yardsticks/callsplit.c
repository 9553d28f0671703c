/* callsplit — splits a write into its system calls: the median time of
 * each call of a create (open with O_CREAT|O_TRUNC, write, close), of an
 * overwrite (open with O_TRUNC, write, close) and of an unlink, so that a
 * filesystem's cost shows where it is paid: the open (LOOKUP, CREATE or
 * OPEN, and GETXATTR of security.capability at an O_TRUNC for a filesystem
 * with extended attributes), the write (WRITE) or the close (FLUSH, where a
 * key-value mount commits; a filesystem without a flush handler is asked
 * once and never again).
 *
 *   callsplit DIR [KEYS=500] [ROUNDS=5]
 *
 * DIR must be empty, and is empty again afterwards. Each round creates,
 * overwrites and unlinks KEYS keys of 64 bytes (key00000, key00001, ...).
 * Output: one line of median nanoseconds per call, over all rounds.
 * docs/performance.md § Where a write's time goes gives figures.
 *
 * Built by hand: cc -O2 -Wall callsplit.c -o callsplit */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
static double med(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }
int main(int argc, char **argv) {
    const char *dir = argv[1]; int keys = argc > 2 ? atoi(argv[2]) : 500, rounds = argc > 3 ? atoi(argv[3]) : 5;
    if (argc < 2 || keys < 1 || rounds < 1) { fprintf(stderr, "usage: callsplit DIR [KEYS] [ROUNDS]\n"); return 2; }
    int n = keys * rounds; char path[4096], value[64]; memset(value, 'v', 64);
    double *s[7]; for (int i = 0; i < 7; i++) s[i] = calloc(n, sizeof(double));
    int j = 0;
    for (int r = 0; r < rounds; r++) {
        for (int phase = 0; phase < 2; phase++)
            for (int k = 0; k < keys; k++) {
                snprintf(path, sizeof path, "%s/key%05d", dir, k);
                double t0 = now(); int fd = open(path, O_WRONLY | O_TRUNC | (phase ? 0 : O_CREAT), 0644);
                double t1 = now(); if (fd < 0 || write(fd, value, 64) != 64) { perror(path); return 1; }
                double t2 = now(); if (close(fd)) { perror(path); return 1; }
                double t3 = now();
                s[phase * 3 + 0][j + k] = t1 - t0; s[phase * 3 + 1][j + k] = t2 - t1; s[phase * 3 + 2][j + k] = t3 - t2;
            }
        for (int k = 0; k < keys; k++) {
            snprintf(path, sizeof path, "%s/key%05d", dir, k);
            double t0 = now(); if (unlink(path)) { perror(path); return 1; } s[6][j + k] = now() - t0;
        }
        j += keys;
    }
    printf("create open %.0f write %.0f close %.0f | overwrite open %.0f write %.0f close %.0f | unlink %.0f\n",
           med(s[0], n), med(s[1], n), med(s[2], n), med(s[3], n), med(s[4], n), med(s[5], n), med(s[6], n));
    return 0;
}
