# PyTorch as users run it: a small CNN trained with SGD (one loss.item() per step), a function
# compiled with torch.compile (Triton kernels), and a step captured with torch.cuda.graph and
# replayed. Deterministic algorithms, so native and recorded runs print the same values.
#   python3 pytorch_training.py [STEPS]
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
device = "cuda"

model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(16 * 7 * 7, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.rand(steps, 32, 1, 28, 28, device=device)
labels = torch.randint(0, 10, (steps, 32), device=device)
losses = []
for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(images[step]), labels[step])
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print(f"training: first loss {losses[0]:.4f} last loss {losses[-1]:.4f}")


@torch.compile
def fused(x, y):
    return torch.sin(x) * torch.cos(y) + (x * y).relu()


x = torch.linspace(-3, 3, 1 << 16, device=device)
y = torch.linspace(1, 2, 1 << 16, device=device)
print(f"compiled: {fused(x, y).sum().item():.3f}")

# torch.cuda.graph: capture one update of a static input, then replay it.
static = torch.zeros(1024, device=device)
stream = torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(stream):
    static.add_(1)  # warm-up outside the capture, as PyTorch asks
torch.cuda.current_stream().wait_stream(stream)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static.mul_(2).add_(1)
for _ in range(5):
    graph.replay()
torch.cuda.synchronize()
print(f"cuda graph: {static[0].item():.0f} {static.sum().item():.0f}")
