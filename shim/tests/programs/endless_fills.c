/* Fills a buffer and waits for it, over and over, until it is killed. */
#include "common.h"
#include <unistd.h>

int main(void) {
  cl_device_id device = pick_device(NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &status);
  CHECK(status);
  for (int round = 0;; round++) {
    CHECK(clEnqueueFillBuffer(queue, buffer, &round, sizeof round, 0, 4096, 0, NULL, NULL));
    CHECK(clFinish(queue));
    usleep(20000);
  }
}
