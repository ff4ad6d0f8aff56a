/* Never-freed blocks of each kind, known by construction (no stdio, so the C
 * library keeps nothing of its own):
 *   still reachable: a 48-byte node held by a global, its 48-byte child, and
 *                    100 bytes held by a static: 3 blocks, 196 bytes;
 *   definitely lost: 3 nodes of 48 bytes whose pointers were dropped: 144 bytes;
 *   indirectly lost: their 3 children, reachable only from them: 144 bytes.
 * scrub() overwrites the stack below main so no stale copy of a dropped
 * pointer survives there. */
#include <stdlib.h>

struct node {
    struct node *child;
    char pad[40];
};

struct node *kept_global;
static void *volatile kept_array;

__attribute__((noinline)) void keep(void)
{
    kept_global = malloc(sizeof(struct node));
    kept_global->child = malloc(sizeof(struct node));
    kept_global->child->child = NULL;
    kept_array = malloc(100);
}

/* A node and its child; the empty asm makes the compiler keep the stores
 * (the blocks are never read, so it could otherwise drop them). */
__attribute__((noinline)) struct node *make_pair(void)
{
    struct node *n = malloc(sizeof(struct node));
    n->child = malloc(sizeof(struct node));
    n->child->child = NULL;
    __asm__ volatile("" : : "r"(n) : "memory");
    return n;
}

__attribute__((noinline)) void lose(void)
{
    for (int i = 0; i < 3; i++)
        make_pair(); /* the pointer is dropped */
}

__attribute__((noinline)) void scrub(void)
{
    volatile char buf[16384];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = 0;
}

int main(void)
{
    keep();
    lose();
    scrub();
    return 0;
}
