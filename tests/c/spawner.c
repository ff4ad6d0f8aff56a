/* Starts itself again as "spawner child" by the means named in argv[1]
 * (vfork, spawn for posix_spawn, system), waits for it, and prints its pid
 * ("child <pid>"; for system, the shell's). The parent leaks 2 blocks of 64
 * bytes in parent_side, the child 7 blocks of 96 in child_work: each must land
 * in its own file, neither overwriting the other. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
void *volatile sink;
__attribute__((noinline)) void *parent_side(void) { void *p = malloc(64); return p; }
__attribute__((noinline)) void *child_work(void) { void *p = malloc(96); return p; }

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        for (int i = 0; i < 7; i++)
            sink = child_work();
        return 0;
    }
    const char *how = argc > 1 ? argv[1] : "";
    for (int i = 0; i < 2; i++)
        sink = parent_side();
    char *child_argv[] = { argv[0], "child", NULL };
    pid_t pid = -1;
    int status = 0;
    fflush(stdout);
    if (strcmp(how, "vfork") == 0) {
        pid = vfork();
        if (pid == 0) {
            execv(argv[0], child_argv);
            _exit(127);
        }
        waitpid(pid, &status, 0);
    } else if (strcmp(how, "spawn") == 0) {
        if (posix_spawn(&pid, argv[0], NULL, NULL, child_argv, environ) != 0)
            return 1;
        waitpid(pid, &status, 0);
    } else if (strcmp(how, "system") == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' child", argv[0]);
        status = system(cmd);
    } else {
        return 2;
    }
    printf("status %d\n", status);
    return 0;
}
