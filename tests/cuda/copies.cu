// gpu-check-flags: -lcuda
// Every copy and memset kind: host to device, device to device, device to host (sync and async),
// 2D copies and memsets, 8-, 16- and 32-bit memsets (the last two through the driver API).
#include "check.h"
#include <cuda.h>
#include <cstdint>
#include <cstring>

int main() {
    const size_t width = 100, height = 32;  // bytes per row, rows
    size_t pitch;
    unsigned char *image, *linear, *copy;
    CHECK(cudaMallocPitch((void **)&image, &pitch, width, height));
    CHECK(cudaMalloc(&linear, width * height));
    CHECK(cudaMalloc(&copy, width * height));
    uint16_t *halves;
    uint32_t *words;
    CHECK(cudaMalloc(&halves, 256 * sizeof(uint16_t)));
    CHECK(cudaMalloc(&words, 256 * sizeof(uint32_t)));

    unsigned char host[width * height];
    for (size_t i = 0; i < sizeof host; i++) host[i] = (unsigned char)(i * 7);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemset2DAsync(image, pitch, 0x11, width, height, s));
    CHECK(cudaMemcpy2DAsync(image, pitch, host, width, width / 2, height, cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpy2DAsync(linear, width, image, pitch, width, height, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaMemcpyAsync(copy, linear, width * height, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaMemsetAsync(copy, 0x22, 10, s));
    CHECK(cudaMemset(linear + width * (height - 1), 0x33, width));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(cuMemsetD16((CUdeviceptr)halves, 0xBEEF, 256) == CUDA_SUCCESS, "cuMemsetD16");
    EXPECT(cuMemsetD32Async((CUdeviceptr)words, 0xCAFEF00D, 256, s) == CUDA_SUCCESS, "cuMemsetD32Async");
    CHECK(cudaStreamSynchronize(s));
    uint16_t halves_host[256];
    uint32_t words_host[256];
    CHECK(cudaMemcpy(halves_host, halves, sizeof halves_host, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(words_host, words, sizeof words_host, cudaMemcpyDeviceToHost));
    EXPECT(halves_host[255] == 0xBEEF && words_host[255] == 0xCAFEF00D, "16/32-bit memsets");

    unsigned char out[width * height];
    CHECK(cudaMemcpy(out, copy, sizeof out, cudaMemcpyDeviceToHost));
    unsigned long sum = 0;
    for (size_t r = 0; r < height; r++)
        for (size_t c = 0; c < width; c++) {
            size_t i = r * width + c;
            unsigned char want = i < 10 ? 0x22 : c < width / 2 ? host[i] : 0x11;
            EXPECT(out[i] == want, "out[%zu] = %u, expected %u", i, out[i], want);
            sum += out[i];
        }
    unsigned char last[width];
    CHECK(cudaMemcpy(last, linear + width * (height - 1), width, cudaMemcpyDeviceToHost));
    for (size_t c = 0; c < width; c++) EXPECT(last[c] == 0x33, "last row");
    printf("copies: checksum %lu\n", sum);
    return 0;
}
