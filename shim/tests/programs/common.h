/* Shared by the shim's test programs: error checks and platform choice by name. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cl_int status_ = (call);                                                           \
    if (status_ != CL_SUCCESS) {                                                       \
      fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, status_);  \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* The first device of the first platform whose name contains `name` (any platform if NULL). */
static inline cl_device_id pick_device(const char *name) {
  cl_platform_id platforms[8];
  cl_uint count = 0;
  CHECK(clGetPlatformIDs(8, platforms, &count));
  for (cl_uint i = 0; i < count; i++) {
    char platform_name[256];
    CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL));
    if (name && !strstr(platform_name, name)) continue;
    cl_device_id device;
    CHECK(clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    return device;
  }
  fprintf(stderr, "no OpenCL platform named like '%s'\n", name ? name : "");
  exit(1);
}

static inline cl_program build_program(cl_context context, cl_device_id device, const char *source, const char *options) {
  cl_int status;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK(status);
  if (clBuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS) {
    char log[8192];
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "build failed:\n%s\n", log);
    exit(1);
  }
  return program;
}
