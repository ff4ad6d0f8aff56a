/* A parent leaks 3 blocks in parent_work, forks, and the child leaks 5 blocks
 * in child_work and exits; the parent waits, then leaks 2 more blocks in
 * parent_work. The parent's file must show 5 parent blocks and no child
 * work; the child's own file (mprof.out.<pid> unless MPROF_OUT has %p) only
 * the child's 5. Prints the child's pid. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void *parent_work(void) { void *p = malloc(100); return p; }
__attribute__((noinline)) void *child_work(void) { void *p = malloc(700); return p; }

int main(void)
{
    for (int i = 0; i < 3; i++)
        sink = parent_work();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 5; i++)
            sink = child_work();
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 2; i++)
        sink = parent_work();
    printf("child %d status %d\n", (int) pid, status);
    return 0;
}
