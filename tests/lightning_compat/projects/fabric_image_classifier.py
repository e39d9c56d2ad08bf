"""Lightning Fabric's own example: the PyTorch MNIST classifier, converted to Fabric in four steps.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning), examples/fabric/image_classifier/train_fabric.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``from lightning.fabric import Fabric, seed_everything``, Fabric(),
           seed_everything(hparams.seed), ``with fabric.rank_zero_first(local=False)``, fabric.is_global_zero,
           fabric.setup_dataloaders(train_loader, test_loader), fabric.setup(model, optimizer), StepLR on the
           wrapped optimizer, fabric.device, fabric.backward(loss), fabric.all_gather(test_loss),
           fabric.save(path=..., state=model.state_dict()), and the argparse options.
Changes:   - torchvision's MNIST and transforms -> the stand-ins in _synthetic.py (640 train, 128 test images).
           - the runner passes ``--epochs 1 --save-model`` (the default is 14 epochs).
           - added: the last line of ``run`` writes results.json for the runner.
Exercises: the Fabric API a plain PyTorch loop is converted with.
"""

import argparse
from os import path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from _synthetic import MNIST, Compose, Normalize, ToTensor, report, weights_digest
from lightning.fabric import Fabric, seed_everything
from torch.optim.lr_scheduler import StepLR
from torchmetrics.classification import Accuracy

DATASETS_PATH = path.join(path.dirname(__file__), "Datasets")


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = self.dropout1(F.max_pool2d(x, 2))
        x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
        return F.log_softmax(self.fc2(x), dim=1)


def run(hparams):
    fabric = Fabric()
    seed_everything(hparams.seed)

    transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
    # rank 0 downloads first, the others then read what it wrote
    with fabric.rank_zero_first(local=False):
        train_dataset = MNIST(DATASETS_PATH, download=fabric.is_global_zero, train=True, transform=transform)
        test_dataset = MNIST(DATASETS_PATH, download=fabric.is_global_zero, train=False, transform=transform)

    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=hparams.batch_size)
    test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=hparams.batch_size)
    train_loader, test_loader = fabric.setup_dataloaders(train_loader, test_loader)

    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=hparams.lr)
    model, optimizer = fabric.setup(model, optimizer)
    scheduler = StepLR(optimizer, step_size=1, gamma=hparams.gamma)
    test_acc = Accuracy(task="multiclass", num_classes=10).to(fabric.device)

    for epoch in range(1, hparams.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            fabric.backward(loss)
            optimizer.step()
            if (batch_idx == 0) or ((batch_idx + 1) % hparams.log_interval == 0):
                print(
                    f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}"
                    f" ({100.0 * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}"
                )
                if hparams.dry_run:
                    break
        scheduler.step()

        model.eval()
        test_loss = 0
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                test_acc(output, target)
                if hparams.dry_run:
                    break
        test_loss = fabric.all_gather(test_loss).sum() / len(test_loader.dataset)
        accuracy = test_acc.compute()
        print(f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: ({100 * accuracy:.0f}%)\n")
        test_acc.reset()
        if hparams.dry_run:
            break

    if hparams.save_model:
        fabric.save(path="mnist_cnn.pt", state=model.state_dict())
    report(test_loss=test_loss, accuracy=accuracy, weights=weights_digest(model), device=str(fabric.device))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Fabric MNIST Example")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N", help="input batch size for training")
    parser.add_argument("--epochs", type=int, default=14, metavar="N", help="number of epochs to train")
    parser.add_argument("--lr", type=float, default=1.0, metavar="LR", help="learning rate")
    parser.add_argument("--gamma", type=float, default=0.7, metavar="M", help="learning rate step gamma")
    parser.add_argument("--dry-run", action="store_true", default=False, help="quickly check a single pass")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed")
    parser.add_argument("--log-interval", type=int, default=10, metavar="N", help="batches between log lines")
    parser.add_argument("--save-model", action="store_true", default=False, help="save the current model")
    run(parser.parse_args())
