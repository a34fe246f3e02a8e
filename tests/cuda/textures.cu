// What NVIDIA's texture samples revealed (simpleTexture, simpleLayeredTexture, simpleSurfaceWrite,
// simplePitchLinearTexture, stereoDisparity): kernels read CUDA arrays and pitched memory through
// texture objects and write arrays through surface objects, passed as 64-bit handles; copies move
// data into and out of arrays. The replay makes its own arrays and objects and passes their handles.
#include "check.h"

// Reads a 2D float array with normalized coordinates and linear filtering, rotated.
__global__ void rotate(float *out, cudaTextureObject_t image, int width, int height, float angle) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float u = x / (float)width - 0.5f, v = y / (float)height - 0.5f;
    float tu = u * cosf(angle) - v * sinf(angle) + 0.5f, tv = v * cosf(angle) + u * sinf(angle) + 0.5f;
    out[y * width + x] = tex2D<float>(image, tu, tv);
}

// Each layer of a layered array, scaled by its layer number, written through a surface.
__global__ void layers(cudaTextureObject_t layered, cudaSurfaceObject_t target, int width, int height, int count) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0;
    for (int layer = 0; layer < count; layer++) sum += (layer + 1) * tex2DLayered<float>(layered, x + 0.5f, y + 0.5f, layer);
    surf2Dwrite(sum, target, x * (int)sizeof(float), y);
}

// Pitched memory read through a texture with point sampling and clamping.
__global__ void shift(int *out, cudaTextureObject_t pitched, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    out[y * width + x] = tex2D<int>(pitched, x + 3, y - 2) - tex2D<int>(pitched, x, y);
}

static cudaTextureObject_t texture_over(cudaResourceDesc resource, cudaTextureFilterMode filter, bool normalized) {
    cudaTextureDesc description = {};
    description.addressMode[0] = description.addressMode[1] = normalized ? cudaAddressModeWrap : cudaAddressModeClamp;
    description.filterMode = filter;
    description.readMode = cudaReadModeElementType;
    description.normalizedCoords = normalized;
    cudaTextureObject_t texture;
    CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
    return texture;
}

int main() {
    const int width = 256, height = 192, count = 4;
    dim3 block(16, 16), grid(width / 16, height / 16);
    float *image = new float[width * height], *layered = new float[width * height * count], *result = new float[width * height];
    for (int i = 0; i < width * height; i++) image[i] = (i * 37 % 101) / 100.0f;
    for (int i = 0; i < width * height * count; i++) layered[i] = (i % 13) * 0.25f;

    // A 2D array filled with a 2D copy, read with filtering.
    cudaChannelFormatDesc floats = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    CHECK(cudaMallocArray(&array, &floats, width, height));
    CHECK(cudaMemcpy2DToArray(array, 0, 0, image, width * sizeof(float), width * sizeof(float), height, cudaMemcpyHostToDevice));
    cudaResourceDesc resource = {};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array;
    cudaTextureObject_t rotated = texture_over(resource, cudaFilterModeLinear, true);
    float *out;
    CHECK(cudaMalloc(&out, width * height * sizeof(float)));
    rotate<<<grid, block>>>(out, rotated, width, height, 0.5f);
    CHECK(cudaMemcpy(result, out, width * height * sizeof(float), cudaMemcpyDeviceToHost));
    double rotated_sum = 0;
    for (int i = 0; i < width * height; i++) rotated_sum += result[i];

    // A layered array filled with a 3D copy, summed into a surface-writable array, read back.
    cudaArray_t layers_array, target;
    CHECK(cudaMalloc3DArray(&layers_array, &floats, make_cudaExtent(width, height, count), cudaArrayLayered));
    CHECK(cudaMallocArray(&target, &floats, width, height, cudaArraySurfaceLoadStore));
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = make_cudaPitchedPtr(layered, width * sizeof(float), width, height);
    copy.dstArray = layers_array;
    copy.extent = make_cudaExtent(width, height, count);
    copy.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&copy));
    resource.res.array.array = layers_array;
    cudaTextureObject_t layered_texture = texture_over(resource, cudaFilterModePoint, false);
    resource.res.array.array = target;
    cudaSurfaceObject_t surface;
    CHECK(cudaCreateSurfaceObject(&surface, &resource));
    layers<<<grid, block>>>(layered_texture, surface, width, height, count);
    CHECK(cudaMemcpy2DFromArray(result, width * sizeof(float), target, 0, 0, width * sizeof(float), height, cudaMemcpyDeviceToHost));
    for (int y = 0; y < height; y += 7)
        for (int x = 0; x < width; x += 5) {
            float expected = 0;
            for (int layer = 0; layer < count; layer++) expected += (layer + 1) * layered[(layer * height + y) * width + x];
            EXPECT(result[y * width + x] == expected, "layers: (%d, %d) = %f, not %f", x, y, result[y * width + x], expected);
        }

    // Pitched memory behind a texture.
    int *pitched, *shifted;
    size_t pitch;
    CHECK(cudaMallocPitch(&pitched, &pitch, width * sizeof(int), height));
    int *values = new int[width * height], *differences = new int[width * height];
    for (int i = 0; i < width * height; i++) values[i] = i * 7;
    CHECK(cudaMemcpy2D(pitched, pitch, values, width * sizeof(int), width * sizeof(int), height, cudaMemcpyHostToDevice));
    cudaResourceDesc linear = {};
    linear.resType = cudaResourceTypePitch2D;
    linear.res.pitch2D.devPtr = pitched;
    linear.res.pitch2D.desc = cudaCreateChannelDesc<int>();
    linear.res.pitch2D.width = width;
    linear.res.pitch2D.height = height;
    linear.res.pitch2D.pitchInBytes = pitch;
    cudaTextureObject_t pitched_texture = texture_over(linear, cudaFilterModePoint, false);
    CHECK(cudaMalloc(&shifted, width * height * sizeof(int)));
    shift<<<grid, block>>>(shifted, pitched_texture, width, height);
    CHECK(cudaMemcpy(differences, shifted, width * height * sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(differences[10 * width + 10] == (3 - 2 * width) * 7, "pitched: %d", differences[10 * width + 10]);

    CHECK(cudaDestroyTextureObject(rotated));
    CHECK(cudaDestroyTextureObject(layered_texture));
    CHECK(cudaDestroyTextureObject(pitched_texture));
    CHECK(cudaDestroySurfaceObject(surface));
    CHECK(cudaFreeArray(array));
    CHECK(cudaFreeArray(layers_array));
    CHECK(cudaFreeArray(target));
    CHECK(cudaFree(out));
    CHECK(cudaFree(pitched));
    CHECK(cudaFree(shifted));
    printf("textures: rotated sum %.3f, layered sums and pitched differences right\n", rotated_sum);
    return 0;
}
