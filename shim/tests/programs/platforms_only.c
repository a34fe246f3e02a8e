/* Lists the OpenCL platforms and does nothing else: a process like this writes no trace. */
#include "common.h"

int main(void) {
  cl_uint count = 0;
  CHECK(clGetPlatformIDs(0, NULL, &count));
  printf("%u platforms\n", count);
  return 0;
}
