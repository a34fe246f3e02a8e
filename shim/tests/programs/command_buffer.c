/* A program that records its own cl_khr_command_buffer (fill, kernel, barrier, copy joined by
 * sync points) and runs it three times, waiting for each run (the buffer is not created for
 * simultaneous use), using the signatures of the revision the platform implements (before 0.9.5
 * only the kernel command takes properties). */
#include "common.h"
#include <CL/cl_ext.h>

typedef cl_uint sync_point;
typedef cl_command_buffer_khr (*create_fn)(cl_uint, const cl_command_queue *, const cl_command_buffer_properties_khr *, cl_int *);
typedef cl_int (*finalize_fn)(cl_command_buffer_khr);
typedef cl_int (*enqueue_fn)(cl_uint, cl_command_queue *, cl_command_buffer_khr, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*ndrange_fn)(cl_command_buffer_khr, cl_command_queue, const cl_ulong *, cl_kernel, cl_uint, const size_t *,
                             const size_t *, const size_t *, cl_uint, const sync_point *, sync_point *, void **);
typedef cl_int (*fill_old_fn)(cl_command_buffer_khr, cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,
                              const sync_point *, sync_point *, void **);
typedef cl_int (*fill_new_fn)(cl_command_buffer_khr, cl_command_queue, const cl_ulong *, cl_mem, const void *, size_t, size_t,
                              size_t, cl_uint, const sync_point *, sync_point *, void **);
typedef cl_int (*copy_old_fn)(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                              const sync_point *, sync_point *, void **);
typedef cl_int (*copy_new_fn)(cl_command_buffer_khr, cl_command_queue, const cl_ulong *, cl_mem, cl_mem, size_t, size_t, size_t,
                              cl_uint, const sync_point *, sync_point *, void **);
typedef cl_int (*barrier_old_fn)(cl_command_buffer_khr, cl_command_queue, cl_uint, const sync_point *, sync_point *, void **);
typedef cl_int (*barrier_new_fn)(cl_command_buffer_khr, cl_command_queue, const cl_ulong *, cl_uint, const sync_point *,
                                 sync_point *, void **);

/* Whether the device's cl_khr_command_buffer is revision 0.9.5 or later. */
static int properties_for_all(cl_device_id device) {
  size_t size = 0;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &size));
  cl_name_version *extensions = malloc(size);
  CHECK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, size, extensions, NULL));
  int found = -1;
  for (size_t i = 0; i < size / sizeof *extensions; i++) {
    if (strcmp(extensions[i].name, "cl_khr_command_buffer") != 0) continue;
    cl_version v = extensions[i].version;
    found = CL_VERSION_MAJOR(v) > 0 || CL_VERSION_MINOR(v) > 9 || (CL_VERSION_MINOR(v) == 9 && CL_VERSION_PATCH(v) >= 5);
  }
  free(extensions);
  if (found < 0) {
    fprintf(stderr, "the device has no cl_khr_command_buffer\n");
    exit(1);
  }
  return found;
}

static void *function(cl_platform_id platform, const char *name) {
  void *address = clGetExtensionFunctionAddressForPlatform(platform, name);
  if (!address) {
    fprintf(stderr, "no %s\n", name);
    exit(1);
  }
  return address;
}

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_platform_id platform;
  CHECK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL));
  int new_signatures = properties_for_all(device);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  cl_program program = build_program(context, device, "kernel void add(global int *a, int k) { a[get_global_id(0)] += k; }", "");
  cl_kernel add = clCreateKernel(program, "add", &status);
  CHECK(status);
  enum { N = 64 };
  int values[N];
  for (int i = 0; i < N; i++) values[i] = i;
  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof values, values, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof values, NULL, &status);
  CHECK(status);
  int k = 2, zero = 0;
  CHECK(clSetKernelArg(add, 0, sizeof a, &a));
  CHECK(clSetKernelArg(add, 1, sizeof k, &k));

  /* A first window before the command buffer exists. */
  size_t global = N;
  CHECK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clFinish(queue));

  create_fn create = (create_fn)function(platform, "clCreateCommandBufferKHR");
  finalize_fn finalize = (finalize_fn)function(platform, "clFinalizeCommandBufferKHR");
  finalize_fn release = (finalize_fn)function(platform, "clReleaseCommandBufferKHR");
  enqueue_fn enqueue = (enqueue_fn)function(platform, "clEnqueueCommandBufferKHR");
  ndrange_fn ndrange = (ndrange_fn)function(platform, "clCommandNDRangeKernelKHR");
  void *fill = function(platform, "clCommandFillBufferKHR");
  void *copy = function(platform, "clCommandCopyBufferKHR");
  void *barrier = function(platform, "clCommandBarrierWithWaitListKHR");

  cl_command_buffer_khr buffer = create(1, &queue, NULL, &status);
  CHECK(status);
  sync_point filled, added, joined;
  if (new_signatures) {
    CHECK(((fill_new_fn)fill)(buffer, NULL, NULL, b, &zero, sizeof zero, 0, sizeof values, 0, NULL, &filled, NULL));
  } else {
    CHECK(((fill_old_fn)fill)(buffer, NULL, b, &zero, sizeof zero, 0, sizeof values, 0, NULL, &filled, NULL));
  }
  CHECK(ndrange(buffer, NULL, NULL, add, 1, NULL, &global, NULL, 0, NULL, &added, NULL));
  sync_point both[] = {filled, added};
  if (new_signatures) {
    CHECK(((barrier_new_fn)barrier)(buffer, NULL, NULL, 2, both, &joined, NULL));
    CHECK(((copy_new_fn)copy)(buffer, NULL, NULL, a, b, 0, 0, sizeof values, 1, &joined, NULL, NULL));
  } else {
    CHECK(((barrier_old_fn)barrier)(buffer, NULL, 2, both, &joined, NULL));
    CHECK(((copy_old_fn)copy)(buffer, NULL, a, b, 0, 0, sizeof values, 1, &joined, NULL, NULL));
  }
  CHECK(finalize(buffer));

  for (int i = 0; i < 3; i++) {
    CHECK(enqueue(0, NULL, buffer, 0, NULL, NULL));
    CHECK(clFinish(queue));
  }
  CHECK(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof values, values, 0, NULL, NULL));
  long sum = 0;
  for (int i = 0; i < N; i++) sum += values[i];
  printf("sum %ld, b[1] = %d\n", sum, values[1]);
  CHECK(release(buffer));
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseKernel(add);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
