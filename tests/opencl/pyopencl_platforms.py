"""What pyopencl, through the ICD loader its wheel bundles, sees of every platform and device, and one
kernel run on each platform's first device. Under the shim it must print the same."""
import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void square_plus(__global int *out, int add) {
    int i = (int)get_global_id(0); out[i] = i * i + add; }
"""


def main():
    platforms = cl.get_platforms()
    print(f"{len(platforms)} platforms")
    for index, platform in enumerate(platforms):
        print(f"platform {index}: {platform.name} / {platform.vendor} / {platform.version}")
        print(f"  extensions: {platform.extensions}")
        devices = platform.get_devices()
        for device in devices:
            print(f"  device: {device.name} / {device.version} / {device.driver_version}")
            print(f"    extensions: {device.extensions}")
            print(f"    belongs to its platform: {device.platform == platform}")
        context = cl.Context([devices[0]])
        queue = cl.CommandQueue(context)
        kernel = cl.Program(context, SOURCE).build().square_plus
        out = np.empty(256, dtype=np.int32)
        buffer = cl.Buffer(context, cl.mem_flags.WRITE_ONLY, out.nbytes)
        kernel(queue, out.shape, None, buffer, np.int32(index + 1))
        cl.enqueue_copy(queue, out, buffer)
        print(f"  sum on device 0: {int(out.sum())}")


main()
