/* A program asks for its profile with a signal: the file appears while the
 * program waits without allocating (the library's helper thread writes it).
 * The program moves that file aside to <file>.signal, allocates once more and
 * leaves with _exit, which writes the final file.
 * Usage: dump_signal <expected-file> */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void *work(void) { void *p = malloc(123); return p; }

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char aside[4096];
    snprintf(aside, sizeof aside, "%s.signal", argv[1]);
    sink = work();
    raise(SIGUSR1);
    /* Up to 10 s, in 1 ms steps; no allocation meanwhile. */
    int waited = 0;
    while (access(argv[1], F_OK) != 0 && waited < 10000) {
        usleep(1000);
        waited++;
    }
    if (rename(argv[1], aside) == 0)
        puts("dumped");
    fflush(stdout);
    sink = work();
    _exit(0);
}
