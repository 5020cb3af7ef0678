/* A disk whose fsync is slow, for bench/bench_daemon_cpu.py --fsync-delay: preloaded
 * (LD_PRELOAD) into the controller, it sleeps SLOW_FSYNC_MS milliseconds before each
 * fsync and fdatasync, then calls the real one. SQLite's syncs and the journal's own
 * (controller/service/journal.py, os.fsync) both go through these two calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void pause_ms(void) {
    const char *ms = getenv("SLOW_FSYNC_MS");
    long n = ms ? atol(ms) : 0;
    if (n > 0) {
        struct timespec t = {n / 1000, (n % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    pause_ms();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    pause_ms();
    return real(fd);
}
