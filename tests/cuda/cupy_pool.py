# CuPy as its users write it: arrays from its memory pool (which reserves ahead), a RawKernel, cuFFT,
# a reduction, and a CUDA graph CuPy captures itself (stream.begin_capture) and launches three times.
import cupy as cp

x = cp.arange(1 << 16, dtype=cp.float32) / 1024
add_scaled = cp.RawKernel(r'''
extern "C" __global__ void add_scaled(const float *x, float *y, float a, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}''', "add_scaled")
y = cp.ones_like(x)
add_scaled(((x.size + 255) // 256,), (256,), (x, y, cp.float32(2.0), cp.int32(x.size)))
spectrum = cp.fft.rfft(y)
print("cupy: sum", round(float(y.sum()), 2), "spectrum[0]", round(float(abs(spectrum[0])), 2))
stream = cp.cuda.Stream(non_blocking=True)
with stream:
    stream.begin_capture()
    add_scaled(((x.size + 255) // 256,), (256,), (x, y, cp.float32(0.25), cp.int32(x.size)))
    graph = stream.end_capture()
for _ in range(3):
    graph.launch(stream)
stream.synchronize()
print("cupy: after the graph, sum", round(float(y.sum()), 2))
