/* Every way of moving data the shim records, on an in-order queue: writes, fills, copies, the
 * rectangular forms, maps for reading and writing, a sub-buffer, and SVM copies, fills and maps.
 * Prints a checksum of everything the program read back. */
#include "common.h"

enum { SIZE = 256 };

static unsigned checksum(const unsigned char *bytes, size_t count) {
  unsigned sum = 0;
  for (size_t i = 0; i < count; i++) sum = sum * 31 + bytes[i];
  return sum;
}

int main(int argc, char **argv) {
  cl_device_id device = pick_device(argc > 1 ? argv[1] : NULL);
  cl_int status;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
  CHECK(status);
  unsigned char initial[SIZE], host[SIZE], rect[64], read_back[SIZE];
  for (int i = 0; i < SIZE; i++) initial[i] = (unsigned char)i, host[i] = (unsigned char)(255 - i);
  for (int i = 0; i < 64; i++) rect[i] = (unsigned char)(i * 3);
  unsigned sum = 0;

  cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, SIZE, initial, &status);
  CHECK(status);
  cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, SIZE, NULL, &status);
  CHECK(status);
  CHECK(clEnqueueWriteBuffer(queue, b, CL_FALSE, 0, SIZE, host, 0, NULL, NULL));
  unsigned pattern = 0xa1b2c3d4;
  CHECK(clEnqueueFillBuffer(queue, a, &pattern, sizeof pattern, 64, 64, 0, NULL, NULL));
  CHECK(clEnqueueCopyBuffer(queue, a, b, 0, 128, 64, 0, NULL, NULL));
  /* An 8-byte by 4-row rectangle from a host array with 16-byte rows into `b` at (8, 2) with
   * 32-byte rows. */
  size_t buffer_origin[3] = {8, 2, 0}, host_origin[3] = {4, 1, 0}, region[3] = {8, 4, 1};
  CHECK(clEnqueueWriteBufferRect(queue, b, CL_FALSE, buffer_origin, host_origin, region, 32, 0, 16, 0, rect, 0,
                                 NULL, NULL));
  size_t src_origin[3] = {0, 1, 0}, dst_origin[3] = {16, 4, 0}, copy_region[3] = {12, 3, 1};
  CHECK(clEnqueueCopyBufferRect(queue, a, b, src_origin, dst_origin, copy_region, 16, 0, 32, 0, 0, NULL, NULL));
  unsigned char rect_back[96] = {0};
  size_t read_origin[3] = {4, 2, 0}, read_host_origin[3] = {2, 0, 0}, read_region[3] = {10, 3, 1};
  CHECK(clEnqueueReadBufferRect(queue, b, CL_TRUE, read_origin, read_host_origin, read_region, 32, 0, 24, 0,
                                rect_back, 0, NULL, NULL));
  sum = sum * 7 + checksum(rect_back, sizeof rect_back);

  unsigned char *mapped = clEnqueueMapBuffer(queue, b, CL_TRUE, CL_MAP_READ, 32, 64, 0, NULL, NULL, &status);
  CHECK(status);
  sum = sum * 7 + checksum(mapped, 64);
  CHECK(clEnqueueUnmapMemObject(queue, b, mapped, 0, NULL, NULL));
  mapped = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 192, 32, 0, NULL, NULL, &status);
  CHECK(status);
  for (int i = 0; i < 32; i++) mapped[i] = (unsigned char)(i ^ 0x5a);
  CHECK(clEnqueueUnmapMemObject(queue, a, mapped, 0, NULL, NULL));

  cl_buffer_region window = {128, 64};
  cl_mem sub = clCreateSubBuffer(a, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &window, &status);
  CHECK(status);
  CHECK(clEnqueueWriteBuffer(queue, sub, CL_FALSE, 16, 16, host, 0, NULL, NULL));
  CHECK(clFinish(queue));

  unsigned char *svm = clSVMAlloc(context, CL_MEM_READ_WRITE, SIZE, 0);
  if (!svm) {
    fprintf(stderr, "no SVM\n");
    return 1;
  }
  CHECK(clEnqueueSVMMemcpy(queue, CL_FALSE, svm, host, SIZE, 0, NULL, NULL));
  unsigned short short_pattern = 0x1234;
  CHECK(clEnqueueSVMMemFill(queue, svm + 32, &short_pattern, sizeof short_pattern, 32, 0, NULL, NULL));
  CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, svm + 128, 16, 0, NULL, NULL));
  for (int i = 0; i < 16; i++) svm[128 + i] = (unsigned char)(7 * i);
  CHECK(clEnqueueSVMUnmap(queue, svm + 128, 0, NULL, NULL));
  unsigned char svm_back[SIZE];
  CHECK(clEnqueueSVMMemcpy(queue, CL_TRUE, svm_back, svm, SIZE, 0, NULL, NULL));
  sum = sum * 7 + checksum(svm_back, SIZE);

  CHECK(clEnqueueReadBuffer(queue, a, CL_FALSE, 0, SIZE, read_back, 0, NULL, NULL));
  CHECK(clFinish(queue));
  sum = sum * 7 + checksum(read_back, SIZE);
  CHECK(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, SIZE, read_back, 0, NULL, NULL));
  sum = sum * 7 + checksum(read_back, SIZE);
  printf("checksum %08x\n", sum);

  clSVMFree(context, svm);
  clReleaseMemObject(sub);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
