/* Four threads allocate and free, and are joined; main frees everything too.
 * Nothing is lost: glibc's own per-thread storage, cached for the next
 * thread, must not be reported as a leak. */
#include <pthread.h>
#include <stdlib.h>

static void *work(void *arg)
{
    for (int i = 0; i < 100; i++)
        free(malloc(32 + i));
    return arg;
}

int main(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}
