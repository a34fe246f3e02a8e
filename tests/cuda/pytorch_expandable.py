# PyTorch's caching allocator with expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
# set here before torch loads): it reserves one large virtual range per stream and maps physical memory
# into it as it grows (cuMemAddressReserve, cuMemCreate, cuMemMap), so tensors span several mappings.
# An MLP trained on two streams, its batches made on a side stream, with tensors of tens of MB.
# Deterministic algorithms, so native and recorded runs print the same losses.
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
device = "cuda"
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
side = torch.cuda.Stream()
losses = []
for step in range(12):
    with torch.cuda.stream(side):
        generator = torch.Generator(device=device).manual_seed(step)
        images = torch.rand(2048, 1024, device=device, generator=generator)
        labels = torch.randint(0, 10, (2048,), device=device, generator=generator)
    torch.cuda.current_stream().wait_stream(side)
    images.record_stream(torch.cuda.current_stream())
    labels.record_stream(torch.cuda.current_stream())
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(round(loss.item(), 4))
    del images, labels
print("pytorch_expandable: losses", losses)
print("pytorch_expandable: reserved MB", torch.cuda.memory_reserved() // (1 << 20))
