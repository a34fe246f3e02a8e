/* An in-order queue: a write, then two kernels (one with a local-memory argument) and a blocking
 * read per round, three rounds: three segments. */
#include "common.h"

static const char *source =
    "kernel void add(global int *a, global const int *b, int k) { size_t i = get_global_id(0); a[i] += b[i] * k; }\n"
    "kernel void twice(global int *a, local int *tmp) {\n"
    "  size_t i = get_global_id(0), l = get_local_id(0);\n"
    "  tmp[l] = a[i]; barrier(CLK_LOCAL_MEM_FENCE); a[i] = tmp[l] * 2; }\n";

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  cl_program program = build_program(context, device, source, "-cl-std=CL1.2");
  cl_kernel add = clCreateKernel(program, "add", &status);
  CHECK(status);
  cl_kernel twice = clCreateKernel(program, "twice", &status);
  CHECK(status);
  enum { N = 64 };
  int a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = i, b[i] = 3 * i + 1;
  cl_mem buffer_a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &status);
  CHECK(status);
  cl_mem buffer_b = clCreateBuffer(context, CL_MEM_READ_ONLY, sizeof b, NULL, &status);
  CHECK(status);
  CHECK(clEnqueueWriteBuffer(queue, buffer_b, CL_FALSE, 0, sizeof b, b, 0, NULL, NULL));
  int k = 5;
  CHECK(clSetKernelArg(add, 0, sizeof buffer_a, &buffer_a));
  CHECK(clSetKernelArg(add, 1, sizeof buffer_b, &buffer_b));
  CHECK(clSetKernelArg(add, 2, sizeof k, &k));
  CHECK(clSetKernelArg(twice, 0, sizeof buffer_a, &buffer_a));
  CHECK(clSetKernelArg(twice, 1, 16 * sizeof(int), NULL));
  size_t global = N, local = 16;
  for (int round = 0; round < 3; round++) {
    CHECK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(queue, twice, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, buffer_a, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL));
    long sum = 0;
    for (int i = 0; i < N; i++) sum += a[i];
    printf("round %d: sum %ld, a[5] = %d\n", round, sum, a[5]);
  }
  clReleaseMemObject(buffer_a);
  clReleaseMemObject(buffer_b);
  clReleaseKernel(add);
  clReleaseKernel(twice);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
