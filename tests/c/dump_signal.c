/* A long-running program asks for its profile with a signal: after raising
 * MPROF_DUMP_SIGNAL, the next allocation writes the file. The program then
 * leaves with _exit, which skips the exit-time dump, so the file seen is the
 * signal's. Usage: dump_signal <expected-file> */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void *work(void) { void *p = malloc(123); return p; }

int main(int argc, char **argv)
{
    sink = work();
    raise(SIGUSR1);
    sink = work();
    if (argc > 1 && access(argv[1], F_OK) == 0)
        puts("dumped");
    fflush(stdout);
    _exit(0);
}
