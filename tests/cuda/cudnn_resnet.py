# A cuDNN network as its users train it: timm's ResNet-18 (random weights), channels_last,
# cudnn.benchmark, bf16 autocast, four SGD steps and an inference. cuDNN picks its algorithms by
# timing and its Hopper kernels launch with thread-block clusters, so the losses vary natively from
# run to run: the program prints only what does not (the shape of the logits, that the losses are finite).
import torch
import timm

torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
device = "cuda"
model = timm.create_model("resnet18", pretrained=False, num_classes=10).to(device).to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.rand(16, 3, 128, 128, device=device).to(memory_format=torch.channels_last)
labels = torch.randint(0, 10, (16,), device=device)
losses = []
for step in range(4):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
model.eval()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    logits = model(images)
print("cudnn_resnet: logits", tuple(logits.shape), "finite", all(map(lambda value: value == value, losses)))
