# A few element-wise operations and a matmul in PyTorch; prints a checksum of exact values.
import torch

torch.manual_seed(0)
a = torch.arange(64 * 64, device="cuda", dtype=torch.float32).reshape(64, 64) % 7
b = torch.arange(64 * 64, device="cuda", dtype=torch.float32).reshape(64, 64) % 5
c = (a * 2 + b).relu() - 1
d = c @ b
torch.cuda.synchronize()
print(f"pytorch_ops: checksum {d.sum().item():.0f} max {d.max().item():.0f}")
