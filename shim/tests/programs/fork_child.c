/* Records some work, then forks a child that never uses OpenCL and exits: the child must
 * neither write a trace nor touch the parent's. */
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &status);
  CHECK(status);
  int pattern = 7, out[16];
  CHECK(clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, sizeof out, 0, NULL, NULL));
  CHECK(clFinish(queue));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    printf("child\n");
    exit(0);
  }
  int child_status;
  waitpid(child, &child_status, 0);
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  printf("parent %d, child exited %d\n", out[15], WEXITSTATUS(child_status));
  return 0;
}
