/* Ends the process in the way named by argv[1], after leaking 5 blocks of
 * 100 bytes in before_end(): the profile must hold them however it ends.
 *   term int hup quit pipe alrm usr2  raise that signal (default action: die)
 *   _exit _Exit                          leave with status 3 / 4, skipping atexit
 *   abort segv bus fpe ill               abort() or crash (bus is raised)
 *   overflow                             unbounded recursion: the stack overflows
 *   sleep                                print "ready" and sleep until killed
 *   threads                              as sleep, with 3 more threads blocked in pthread_join/pause */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink[5];
volatile int zero = 0, numerator = 1000;

__attribute__((noinline)) void before_end(void)
{
    for (int i = 0; i < 5; i++)
        sink[i] = malloc(100);
}

__attribute__((noinline)) int recurse(volatile int n)
{
    volatile char frame[1024];
    frame[0] = (char) n;
    return recurse(n + 1) + frame[0];
}

static void *blocked(void *arg)
{
    (void) arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    before_end();
    static const struct { const char *name; int sig; } raised[] = {
        { "term", SIGTERM }, { "int", SIGINT }, { "hup", SIGHUP }, { "quit", SIGQUIT },
        { "pipe", SIGPIPE }, { "alrm", SIGALRM }, { "usr2", SIGUSR2 }, { "bus", SIGBUS },
    };
    for (size_t i = 0; i < sizeof raised / sizeof raised[0]; i++)
        if (strcmp(how, raised[i].name) == 0)
            raise(raised[i].sig);
    if (strcmp(how, "_exit") == 0)
        _exit(3);
    if (strcmp(how, "_Exit") == 0)
        _Exit(4);
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "segv") == 0)
        *(volatile int *) 16 = 1;
    if (strcmp(how, "fpe") == 0)
        printf("%d\n", numerator / zero);
    if (strcmp(how, "ill") == 0)
        __builtin_trap();
    if (strcmp(how, "overflow") == 0)
        printf("%d\n", recurse(0));
    if (strcmp(how, "threads") == 0) {
        pthread_t t[3];
        for (int i = 0; i < 3; i++)
            pthread_create(&t[i], NULL, blocked, NULL);
        puts("ready");
        fflush(stdout);
        pthread_join(t[0], NULL);
    }
    if (strcmp(how, "sleep") == 0) {
        puts("ready");
        fflush(stdout);
        for (;;)
            sleep(1000);
    }
    return 0;
}
