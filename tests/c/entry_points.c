/* Every allocating entry point, with its edge cases: calloc zeroing and
 * overflow, realloc growth/shrink/NULL/zero, reallocarray overflow, the
 * aligned family (alignment honoured, bad alignments refused),
 * malloc_usable_size. Exits 1 on the first broken promise; leaks exactly
 * one block of each of 5 sizes in leak_* functions. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)

__attribute__((noinline)) void *leak_calloc(void) { void *p = calloc(10, 10); return p; }              /* 100 */
__attribute__((noinline)) void *leak_aligned(void) { void *p = aligned_alloc(64, 256); return p; }     /* 256 */
__attribute__((noinline)) void *leak_memalign(void) { void *p = memalign(4096, 5000); return p; }      /* 5000 */
__attribute__((noinline)) void *leak_posix(void) { void *p = 0; posix_memalign(&p, 128, 40); return p; } /* 40 */
__attribute__((noinline)) void *leak_realloc(void) { void *p = realloc(NULL, 7); p = realloc(p, 700); return p; } /* 700 */

int main(void)
{
    unsigned char *z = calloc(100, 3);
    CHECK(z);
    for (int i = 0; i < 300; i++) CHECK(z[i] == 0);
    free(z);
    errno = 0;
    CHECK(calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);

    char *r = malloc(10);
    strcpy(r, "abcdefghi");
    r = realloc(r, 100000);
    CHECK(r && strcmp(r, "abcdefghi") == 0);
    r = realloc(r, 5);
    CHECK(r && memcmp(r, "abcde", 5) == 0);
    CHECK(malloc_usable_size(r) >= 5);
    CHECK(realloc(r, 0) == NULL);
    errno = 0;
    CHECK(reallocarray(NULL, SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
    int *arr = reallocarray(NULL, 10, sizeof(int));
    CHECK(arr);
    free(arr);

    void *a = NULL;
    CHECK(posix_memalign(&a, 3, 10) == EINVAL);
    CHECK(posix_memalign(&a, 256, 10) == 0 && ((uintptr_t) a % 256) == 0);
    memset(a, 1, 10);
    char *moved = realloc(a, 20);
    CHECK(moved && moved[9] == 1);
    free(moved);
    void *v = valloc(10);
    CHECK(v && ((uintptr_t) v % sysconf(_SC_PAGESIZE)) == 0);
    free(v);
    void *pv = pvalloc(10);
    CHECK(pv && ((uintptr_t) pv % sysconf(_SC_PAGESIZE)) == 0);
    CHECK(malloc_usable_size(pv) >= (size_t) sysconf(_SC_PAGESIZE));
    free(pv);
    void *m = memalign(32, 33);
    CHECK(m && ((uintptr_t) m % 32) == 0);
    free(m);
    CHECK(malloc_usable_size(NULL) == 0);
    free(NULL);

    CHECK(leak_calloc() && leak_aligned() && leak_memalign() && leak_posix() && leak_realloc());
    sink = leak_aligned();
    CHECK(((uintptr_t) sink % 64) == 0);
    printf("ok\n");
    return 0;
}
