/*
 * libfenceline-shm: the shm transport's copy of a large put into a peer's sealed segment.
 *
 * The CPU's string move copies a large block faster here than the JVM's vector loop or glibc's
 * memcpy, which for sizes about the size of L2 keeps to vector loops. Called only into memory that
 * cannot shrink under the copy (a sealed segment): a fault here would end the process, where the
 * JVM's own copy throws an InternalError.
 */
#include <stddef.h>
#include <string.h>

/* Raised whenever a function's signature or meaning changes: the loader refuses another. */
#define FLC_ABI 1

int flc_abi(void) {
    return FLC_ABI;
}

void flc_copy(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    /* A fast string's stores may land in any order among themselves: the sfence orders them all
       before the caller's next store (a put's readers acquire a flag written after it). */
    __asm__ volatile("rep movsb\n\tsfence" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
    memcpy(dst, src, n);
#endif
}
