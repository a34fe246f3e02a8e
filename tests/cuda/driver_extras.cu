// gpu-check-flags: -lcuda
// Driver calls beyond plain allocations and streams, each checked by its results: a created
// context pushed and popped (then destroyed with its memory), a __device__ variable written by
// kernels and through its address, registered host memory a kernel reaches through its device
// pointer, a 3D copy, a peer copy within one device, a range mapped with the virtual memory calls,
// and stream and event queries polled until the work is done.
#include "check.h"
#include "check_driver.h"
#include <cstdint>
#include <cstdlib>
#include <cstring>


const int N = 256;
__device__ int counter[N];

__global__ void add(int *data, int n, int value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

__global__ void bump_counter(int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) counter[i] += i;
}

static void add_on(int *data, int n, int value, cudaStream_t stream = 0) {
    add<<<(n + 127) / 128, 128, 0, stream>>>(data, n, value);
    CHECK(cudaGetLastError());
}

/// Polls until the stream's work is done: NOT_READY until then, never an error.
static int poll_stream(cudaStream_t stream) {
    int polls = 0;
    CUresult status;
    while ((status = cuStreamQuery((CUstream)stream)) == CUDA_ERROR_NOT_READY) polls++;
    CHECK_DRIVER(status);
    return polls;
}

int main() {
    CHECK(cudaFree(0));  // the primary context, current from here on
    CUdevice device;
    CUcontext primary;
    CHECK_DRIVER(cuCtxGetDevice(&device));
    CHECK_DRIVER(cuCtxGetCurrent(&primary));
    long checksum = 0;

    // A created context, pushed for its work and popped; destroying it frees its memory.
    {
        CUcontext created, popped;
        CHECK_DRIVER(cuCtxCreate(&created, nullptr, 0, device));
        CHECK_DRIVER(cuCtxPopCurrent(&popped));  // cuCtxCreate made it current
        EXPECT(popped == created, "cuCtxPopCurrent gave another context");
        CHECK_DRIVER(cuCtxPushCurrent(created));
        CUdeviceptr data;
        int host[N];
        for (int i = 0; i < N; i++) host[i] = i;
        CHECK_DRIVER(cuMemAlloc(&data, sizeof host));
        CHECK_DRIVER(cuMemcpyHtoD(data, host, sizeof host));
        add_on((int *)data, N, 3);
        CHECK_DRIVER(cuCtxSynchronize());
        CHECK_DRIVER(cuMemcpyDtoH(host, data, sizeof host));
        for (int i = 0; i < N; i++) EXPECT(host[i] == i + 3, "created context: host[%d] = %d", i, host[i]);
        CHECK_DRIVER(cuCtxPopCurrent(&popped));
        EXPECT(popped == created, "cuCtxPopCurrent gave another context");
        CUcontext current;
        CHECK_DRIVER(cuCtxGetCurrent(&current));
        EXPECT(current == primary, "the primary context is not current again");
        CHECK_DRIVER(cuCtxDestroy(created));
        checksum += host[N - 1];
    }

    // A __device__ variable: set by a copy, bumped by a kernel that names it, and through its
    // address by a kernel that takes a pointer.
    {
        int initial[N];
        for (int i = 0; i < N; i++) initial[i] = 1000;
        CHECK(cudaMemcpyToSymbol(counter, initial, sizeof initial));
        int *address;
        CHECK(cudaGetSymbolAddress((void **)&address, counter));
        bump_counter<<<(N + 127) / 128, 128>>>(N);
        CHECK(cudaGetLastError());
        add_on(address + 1, N - 1, 7);
        int out[N];
        CHECK(cudaMemcpyFromSymbol(out, counter, sizeof out));
        for (int i = 0; i < N; i++) {
            int want = 1000 + i + (i >= 1 ? 7 : 0);
            EXPECT(out[i] == want, "counter[%d] = %d, expected %d", i, out[i], want);
        }
        checksum += out[N - 1];
    }

    // Registered host memory, used by a kernel through its device pointer.
    {
        int *host = (int *)aligned_alloc(4096, 4096);
        EXPECT(host, "aligned_alloc");
        for (int i = 0; i < N; i++) host[i] = 2 * i;
        CHECK_DRIVER(cuMemHostRegister(host, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
        CUdeviceptr device_view;
        CHECK_DRIVER(cuMemHostGetDevicePointer(&device_view, host, 0));
        add_on((int *)device_view, N, 5);
        CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < N; i++) EXPECT(host[i] == 2 * i + 5, "registered host[%d] = %d", i, host[i]);
        checksum += host[N - 1];
        CHECK_DRIVER(cuMemHostUnregister(host));
        free(host);
    }

    // A 3D copy: a 4 x 3 x 2 int box from (1, 1, 1) of an 8 x 6 x 4 volume into a packed one.
    {
        const size_t width = 8, height = 6, depth = 4, box_w = 4, box_h = 3, box_d = 2;
        int volume[depth][height][width];
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < height; y++)
                for (size_t x = 0; x < width; x++) volume[z][y][x] = (int)(z * 100 + y * 10 + x);
        CUdeviceptr src, dst;
        CHECK_DRIVER(cuMemAlloc(&src, sizeof volume));
        CHECK_DRIVER(cuMemAlloc(&dst, box_w * box_h * box_d * sizeof(int)));
        CHECK_DRIVER(cuMemcpyHtoD(src, volume, sizeof volume));
        CUDA_MEMCPY3D copy;
        memset(&copy, 0, sizeof copy);
        copy.srcXInBytes = 1 * sizeof(int);
        copy.srcY = 1;
        copy.srcZ = 1;
        copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.srcDevice = src;
        copy.srcPitch = width * sizeof(int);
        copy.srcHeight = height;
        copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.dstDevice = dst;
        copy.dstPitch = box_w * sizeof(int);
        copy.dstHeight = box_h;
        copy.WidthInBytes = box_w * sizeof(int);
        copy.Height = box_h;
        copy.Depth = box_d;
        CHECK_DRIVER(cuMemcpy3D(&copy));
        add_on((int *)dst, (int)(box_w * box_h * box_d), 1);
        int box[box_d][box_h][box_w];
        CHECK_DRIVER(cuMemcpyDtoH(box, dst, sizeof box));
        for (size_t z = 0; z < box_d; z++)
            for (size_t y = 0; y < box_h; y++)
                for (size_t x = 0; x < box_w; x++) {
                    int want = volume[z + 1][y + 1][x + 1] + 1;
                    EXPECT(box[z][y][x] == want, "box[%zu][%zu][%zu] = %d, expected %d", z, y, x, box[z][y][x], want);
                }
        checksum += box[box_d - 1][box_h - 1][box_w - 1];
    }

    // A peer copy between two buffers of the same context.
    {
        int host[N];
        for (int i = 0; i < N; i++) host[i] = 5 * i;
        CUdeviceptr from, to;
        CHECK_DRIVER(cuMemAlloc(&from, sizeof host));
        CHECK_DRIVER(cuMemAlloc(&to, sizeof host));
        CHECK_DRIVER(cuMemcpyHtoD(from, host, sizeof host));
        CHECK_DRIVER(cuMemcpyPeer(to, primary, from, primary, sizeof host));
        add_on((int *)to, N, 2);
        CHECK_DRIVER(cuMemcpyDtoH(host, to, sizeof host));
        for (int i = 0; i < N; i++) EXPECT(host[i] == 5 * i + 2, "peer copy: host[%d] = %d", i, host[i]);
        checksum += host[N - 1];
    }

    // A range mapped with the virtual memory calls, used by kernels, polled with queries.
    int polls = 0;
    {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = device;
        size_t granularity;
        CHECK_DRIVER(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        size_t size = (N * sizeof(int) + granularity - 1) / granularity * granularity;
        CUdeviceptr range;
        CUmemGenericAllocationHandle handle;
        CHECK_DRIVER(cuMemAddressReserve(&range, size, 0, 0, 0));
        CHECK_DRIVER(cuMemCreate(&handle, size, &prop, 0));
        CHECK_DRIVER(cuMemMap(range, size, 0, handle, 0));
        CUmemAccessDesc access;
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        CHECK_DRIVER(cuMemSetAccess(range, size, &access, 1));

        cudaStream_t stream;
        CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CHECK(cudaMemsetAsync((void *)range, 0, N * sizeof(int), stream));
        add_on((int *)range, N, 4, stream);
        polls += poll_stream(stream);
        add_on((int *)range, N / 2, 6, stream);
        cudaEvent_t done;
        CHECK(cudaEventCreate(&done));
        CHECK_DRIVER(cuEventRecord((CUevent)done, (CUstream)stream));
        CUresult status;
        while ((status = cuEventQuery((CUevent)done)) == CUDA_ERROR_NOT_READY) polls++;
        CHECK_DRIVER(status);
        int out[N];
        CHECK(cudaMemcpy(out, (void *)range, sizeof out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            int want = 4 + (i < N / 2 ? 6 : 0);
            EXPECT(out[i] == want, "mapped range: out[%d] = %d, expected %d", i, out[i], want);
        }
        checksum += out[0] + out[N - 1];
        CHECK(cudaEventDestroy(done));
        CHECK(cudaStreamDestroy(stream));
        CHECK_DRIVER(cuMemUnmap(range, size));
        CHECK_DRIVER(cuMemRelease(handle));
        CHECK_DRIVER(cuMemAddressFree(range, size));
    }
    // How often a query found work still running varies from run to run: not printed.
    (void)polls;
    printf("driver extras: checksum %ld\n", checksum);
    return 0;
}
