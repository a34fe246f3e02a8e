# Triton as its users write it: a @triton.jit kernel launched over a grid, with autotuning off.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2 + tl.load(y_ptr + offsets, mask=mask), mask=mask)


n = 1 << 16
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.ones(n, device="cuda", dtype=torch.float32)
out = torch.empty_like(x)
for _ in range(3):
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
print("triton: sum", float(out.sum().item()))
