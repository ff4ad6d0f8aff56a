/* A daemon-like program closes every descriptor above stderr, opens files
 * of its own (taking the lowest numbers again), asks for a dump with the signal and allocates: the profile is
 * still written (at that allocation) and nothing is written into its file. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile sink;

int main(void)
{
    for (int fd = 3; fd < 4096; fd++)
        close(fd);
    int fd = open("data.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int fd2 = open("data2.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || fd2 < 0)
        return 2;
    usleep(50000); /* the library's thread notices its pipe is gone */
    raise(SIGUSR1);
    sink = malloc(10);
    close(fd);
    close(fd2);
    _exit(0);
}
