/* A library preloaded after the shim that wraps puts and finds the real one with
 * dlsym(RTLD_NEXT), as interposers do. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int puts(const char *text) {
  static int (*next)(const char *);
  if (!next) next = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
  fputs("wrapped: ", stdout);
  return next(text);
}
