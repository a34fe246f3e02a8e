/* Programs built from source, from a device binary and by compiling and linking; kernels from
 * clCreateKernelsInProgram; a task; an SVM pointer (inside its allocation) as a kernel argument;
 * an event callback; a null buffer argument. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "common.h"

static const char *source =
    "kernel void fill(global int *a, int v) { a[get_global_id(0)] = v; }\n"
    "kernel void one(global int *a) { a[0] += 1; }\n"
    "kernel void svm_add(global int *p, int k) { p[get_global_id(0)] += k; }\n"
    "kernel void add_extra(global int *a, global const int *extra) { if (extra) a[1] += extra[0]; }\n";
static const char *linked_source = "kernel void set_k(global int *a) { a[get_global_id(0) + 8] = K; }\n";

static int callbacks = 0;
static void CL_CALLBACK count(cl_event event, cl_int status, void *data) {
  (void)event;
  (void)status;
  __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

static cl_kernel find(cl_kernel *kernels, cl_uint count_, const char *name) {
  for (cl_uint i = 0; i < count_; i++) {
    char found[64];
    CHECK(clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, sizeof found, found, NULL));
    if (strcmp(found, name) == 0) return kernels[i];
  }
  fprintf(stderr, "no kernel %s\n", name);
  exit(1);
}

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);

  cl_program from_source = build_program(context, device, source, "-cl-std=CL2.0 -cl-kernel-arg-info");
  size_t binary_size;
  CHECK(clGetProgramInfo(from_source, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, NULL));
  unsigned char *binary = malloc(binary_size);
  CHECK(clGetProgramInfo(from_source, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
  cl_program from_binary =
      clCreateProgramWithBinary(context, 1, &device, &binary_size, (const unsigned char **)&binary, NULL, &status);
  CHECK(status);
  CHECK(clBuildProgram(from_binary, 1, &device, "", NULL, NULL));
  cl_kernel kernels[4];
  cl_uint kernel_count;
  CHECK(clCreateKernelsInProgram(from_binary, 4, kernels, &kernel_count));

  cl_program compiled = clCreateProgramWithSource(context, 1, &linked_source, NULL, &status);
  CHECK(status);
  CHECK(clCompileProgram(compiled, 1, &device, "-DK=3", 0, NULL, NULL, NULL, NULL));
  cl_program linked = clLinkProgram(context, 1, &device, "", 1, &compiled, NULL, NULL, &status);
  CHECK(status);
  cl_kernel set_k = clCreateKernel(linked, "set_k", &status);
  CHECK(status);

  enum { N = 16 };
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &status);
  CHECK(status);
  cl_kernel fill = find(kernels, kernel_count, "fill"), one = find(kernels, kernel_count, "one");
  int seven = 7;
  size_t global = N, half = N / 2;
  CHECK(clSetKernelArg(fill, 0, sizeof buffer, &buffer));
  CHECK(clSetKernelArg(fill, 1, sizeof seven, &seven));
  CHECK(clEnqueueNDRangeKernel(queue, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clSetKernelArg(one, 0, sizeof buffer, &buffer));
  CHECK(clEnqueueTask(queue, one, 0, NULL, NULL));
  CHECK(clSetKernelArg(set_k, 0, sizeof buffer, &buffer));
  CHECK(clEnqueueNDRangeKernel(queue, set_k, 1, NULL, &half, NULL, 0, NULL, NULL));
  cl_kernel add_extra = clCreateKernel(from_source, "add_extra", &status);
  CHECK(status);
  cl_mem no_buffer = NULL;
  CHECK(clSetKernelArg(add_extra, 0, sizeof buffer, &buffer));
  CHECK(clSetKernelArg(add_extra, 1, sizeof no_buffer, &no_buffer));
  CHECK(clEnqueueTask(queue, add_extra, 0, NULL, NULL));

  int *svm = clSVMAlloc(context, CL_MEM_READ_WRITE, 4 * N * sizeof(int), 0);
  if (!svm) {
    fprintf(stderr, "no SVM\n");
    return 1;
  }
  int zero = 0, k = 5;
  CHECK(clEnqueueSVMMemFill(queue, svm, &zero, sizeof zero, 4 * N * sizeof(int), 0, NULL, NULL));
  cl_kernel svm_add = find(kernels, kernel_count, "svm_add");
  CHECK(clSetKernelArgSVMPointer(svm_add, 0, svm + N));
  CHECK(clSetKernelArg(svm_add, 1, sizeof k, &k));
  cl_event added;
  CHECK(clEnqueueNDRangeKernel(queue, svm_add, 1, NULL, &global, NULL, 0, NULL, &added));
  CHECK(clSetEventCallback(added, CL_COMPLETE, count, &callbacks));
  int values[N];
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_FALSE, 0, sizeof values, values, 0, NULL, NULL));
  CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, svm, 4 * N * sizeof(int), 0, NULL, NULL));
  printf("buffer %d %d %d, svm %d %d %d\n", values[0], values[1], values[8], svm[N - 1], svm[N], svm[2 * N - 1]);
  CHECK(clEnqueueSVMUnmap(queue, svm, 0, NULL, NULL));
  CHECK(clFinish(queue));
  while (__atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) == 0) {
  }
  printf("callbacks %d\n", callbacks);
  clReleaseEvent(added);
  clSVMFree(context, svm);
  return 0;
}
