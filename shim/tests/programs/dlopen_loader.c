/* Reaches OpenCL only through dlopen of the loader and dlsym on its handle. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "common.h"
#include <dlfcn.h>

#define LOAD(name)                                                                   \
  __typeof__(&name) p_##name = (__typeof__(&name))dlsym(loader, #name);              \
  if (!p_##name) {                                                                   \
    fprintf(stderr, "the loader has no %s\n", #name);                                \
    return 1;                                                                        \
  }

int main(void) {
  void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  LOAD(clGetPlatformIDs)
  LOAD(clGetDeviceIDs)
  LOAD(clCreateContext)
  LOAD(clCreateCommandQueue)
  LOAD(clCreateBuffer)
  LOAD(clEnqueueFillBuffer)
  LOAD(clEnqueueReadBuffer)
  LOAD(clFinish)
  cl_platform_id platform;
  cl_device_id device;
  cl_int status;
  CHECK(p_clGetPlatformIDs(1, &platform, NULL));
  CHECK(p_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_context context = p_clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = p_clCreateCommandQueue(context, device, 0, &status);
  CHECK(status);
  cl_mem buffer = p_clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &status);
  CHECK(status);
  int pattern = 0x01020304, out[16];
  CHECK(p_clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, sizeof out, 0, NULL, NULL));
  CHECK(p_clEnqueueReadBuffer(queue, buffer, CL_FALSE, 0, sizeof out, out, 0, NULL, NULL));
  CHECK(p_clFinish(queue));
  printf("%08x %08x\n", out[0], out[15]);
  return 0;
}
