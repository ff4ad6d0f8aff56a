/* fork + exec: the program runs itself again as "exec_child child". The
 * exec'd image (still preloaded) must write its own file, mprof.out.<pid>,
 * named by the forked child before exec, and never overwrite the parent's.
 * The parent leaks 2 blocks in parent_side, the exec'd child 7 in
 * exec_child_work. Prints the child's pid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void *parent_side(void) { void *p = malloc(64); return p; }
__attribute__((noinline)) void *exec_child_work(void) { void *p = malloc(96); return p; }

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        for (int i = 0; i < 7; i++)
            sink = exec_child_work();
        return 0;
    }
    for (int i = 0; i < 2; i++)
        sink = parent_side();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *child_argv[] = { argv[0], "child", NULL };
        execv(argv[0], child_argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child %d status %d\n", (int) pid, status);
    return 0;
}
