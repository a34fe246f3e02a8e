/* An out-of-order queue whose kernels are ordered only by events, a second queue joined to it by
 * events, a user event gating work, markers and barriers. Prints the final values. */
#include "common.h"

static const char *source =
    "kernel void add(global int *a, int k) { a[get_global_id(0)] += k; }\n"
    "kernel void sum(global int *out, global const int *a, global const int *b) {\n"
    "  size_t i = get_global_id(0); out[i] = a[i] + b[i]; }\n";

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue q1 = clCreateCommandQueueWithProperties(context, device, ooo, &status);
  CHECK(status);
  cl_command_queue q2 = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  cl_program program = build_program(context, device, source, "");
  cl_kernel add_a = clCreateKernel(program, "add", &status);
  CHECK(status);
  cl_kernel add_b = clCloneKernel(add_a, &status);
  CHECK(status);
  cl_kernel sum = clCreateKernel(program, "sum", &status);
  CHECK(status);
  enum { N = 32 };
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &status);
  CHECK(status);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &status);
  CHECK(status);
  int zero = 0, k1 = 3, k2 = 5;
  size_t global = N;
  cl_event filled_a, filled_b, added_a, added_b, summed, barrier, gate_done;
  /* Nodes 0 and 1: independent fills; 2 and 3: one kernel after each fill; 4: a sum after both. */
  CHECK(clEnqueueFillBuffer(q1, a, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, &filled_a));
  CHECK(clEnqueueFillBuffer(q1, b, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, &filled_b));
  CHECK(clSetKernelArg(add_a, 0, sizeof a, &a));
  CHECK(clSetKernelArg(add_a, 1, sizeof k1, &k1));
  CHECK(clSetKernelArg(add_b, 0, sizeof b, &b));
  CHECK(clSetKernelArg(add_b, 1, sizeof k2, &k2));
  CHECK(clEnqueueNDRangeKernel(q1, add_a, 1, NULL, &global, NULL, 1, &filled_a, &added_a));
  CHECK(clEnqueueNDRangeKernel(q1, add_b, 1, NULL, &global, NULL, 1, &filled_b, &added_b));
  cl_event both[] = {added_a, added_b};
  CHECK(clSetKernelArg(sum, 0, sizeof out, &out));
  CHECK(clSetKernelArg(sum, 1, sizeof a, &a));
  CHECK(clSetKernelArg(sum, 2, sizeof b, &b));
  CHECK(clEnqueueNDRangeKernel(q1, sum, 1, NULL, &global, NULL, 2, both, &summed));
  /* Node 5: a barrier joining everything on q1 so far. */
  CHECK(clEnqueueBarrierWithWaitList(q1, 0, NULL, &barrier));
  /* Node 6 (host task) and 7: q2 adds to `a` once the user event is set and the barrier passed. */
  cl_event gate = clCreateUserEvent(context, &status);
  CHECK(status);
  cl_event gated[] = {gate, barrier};
  CHECK(clEnqueueNDRangeKernel(q2, add_a, 1, NULL, &global, NULL, 2, gated, &gate_done));
  /* Node 8: a marker on q1 after the q2 kernel. */
  cl_event marker;
  CHECK(clEnqueueMarkerWithWaitList(q1, 1, &gate_done, &marker));
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
  /* Node 10: reading `a` on q2 (in order after node 7), written after q1's work closes. */
  int result_a[N], result_out[N];
  CHECK(clEnqueueReadBuffer(q2, a, CL_FALSE, 0, sizeof result_a, result_a, 0, NULL, NULL));
  /* Node 9: reading `out` on q1 after the marker. */
  CHECK(clEnqueueReadBuffer(q1, out, CL_FALSE, 0, sizeof result_out, result_out, 1, &marker, NULL));
  /* q1's finish covers everything but the read on q2, which q2's finish closes alone. */
  CHECK(clFinish(q1));
  CHECK(clFinish(q2));
  printf("a[0]=%d a[%d]=%d out[0]=%d out[%d]=%d\n", result_a[0], N - 1, result_a[N - 1], result_out[0], N - 1,
         result_out[N - 1]);
  cl_event events[] = {filled_a, filled_b, added_a, added_b, summed, barrier, gate, gate_done, marker};
  for (size_t i = 0; i < sizeof events / sizeof *events; i++) clReleaseEvent(events[i]);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(out);
  clReleaseKernel(add_a);
  clReleaseKernel(add_b);
  clReleaseKernel(sum);
  clReleaseProgram(program);
  clReleaseCommandQueue(q1);
  clReleaseCommandQueue(q2);
  clReleaseContext(context);
  return 0;
}
