// Large copies back to the host: a synchronous one into pageable memory, and two asynchronous
// ones into the same pinned buffer before one synchronization (the first one's data never reaches
// the host: the second overwrites it). The shim keeps what the host received from copies of its
// own, which the device makes into the shim's staging memory just before the program's.
#include "driver.h"
#include <stdlib.h>

int main(void) {
    if (!open_driver()) return 0;
    F(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
    F(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, void *);
    F(cuMemHostAlloc, void **, size_t, unsigned);
    F(cuStreamCreate, void **, unsigned);
    F(cuStreamSynchronize, void *);
    const int n = 2 << 20; // ints: 8 MB
    const size_t bytes = (size_t)n * sizeof(int);
    void *add = kernel_named("add1");
    CUdeviceptr device = ints_set_to(7, n);
    int *pageable = malloc(bytes), *pinned;
    cuMemcpyDtoH_v2(pageable, device, bytes);
    void *stream;
    cuStreamCreate(&stream, 0);
    cuMemHostAlloc((void **)&pinned, bytes, 0);
    add1(add, stream, device, n);
    cuMemcpyDtoHAsync_v2(pinned, device, bytes, stream);
    add1(add, stream, device, n);
    cuMemcpyDtoHAsync_v2(pinned, device, bytes, stream);
    cuStreamSynchronize(stream);
    printf("%d %d %d\n", pageable[0], pageable[n - 1], pinned[n - 1]);
    return 0;
}
