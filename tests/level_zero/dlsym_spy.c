/* An LD_PRELOAD library that stands for an interposer such as the shim: its dlsym writes each name
 * asked for to $REPRISE_TEST_DLSYM_LOG, then answers as the C library's dlsym. The test double must
 * not look up OpenCL functions through it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *dlsym(void *handle, const char *name) {
    static void *(*real)(void *, const char *);
    if (real == NULL) real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (real == NULL) real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    const char *path = getenv("REPRISE_TEST_DLSYM_LOG");
    FILE *log = path != NULL ? fopen(path, "a") : NULL;
    if (log != NULL) {
        fprintf(log, "%s\n", name);
        fclose(log);
    }
    return real(handle, name);
}
