"""Stand-ins for what the collected projects download or take from torchvision, written for these tests.

The projects under this folder are real public Lightning scripts; where a script downloads a data set
(MNIST, CIFAR10, WikiText-2, cats and dogs), pretrained weights or a gym environment (CartPole), it
imports the stand-in from here instead, which gives items of the same shape and dtype from a fixed
seed, so a run needs no network, no torchvision and no gym. Classes are separable (each class is a
noisy copy of its own template), so a few steps of training visibly lower the loss. Nothing here
imports Lightning or accelplug: the runner copies this file next to a project unchanged. ``report``
is the one line added at the end of each project: it writes the values the runner compares between
Lightning and accelplug.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset

Transform = Callable[[torch.Tensor], torch.Tensor]


def _class_images(n: int, shape: tuple[int, ...], num_classes: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` uint8 images of ``shape`` whose pixels are their class's template plus noise."""
    generator = torch.Generator().manual_seed(seed)
    templates = torch.rand((num_classes, *shape), generator=torch.Generator().manual_seed(1234))
    targets = torch.randint(num_classes, (n,), generator=generator)
    noise = torch.rand((n, *shape), generator=generator)
    images = (0.7 * templates[targets] + 0.3 * noise).mul(255).round().to(torch.uint8)
    return images, targets


class ToTensor:
    """torchvision's ``ToTensor`` for the uint8 tensors these data sets hold: HWC or HW uint8 -> CHW float."""

    def __call__(self, image: torch.Tensor) -> torch.Tensor:
        if image.ndim == 2:
            image = image.unsqueeze(-1)
        return image.permute(2, 0, 1).float().div(255)


class Normalize:
    """torchvision's ``Normalize``: per-channel ``(x - mean) / std``."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, tensor: torch.Tensor) -> torch.Tensor:
        return (tensor - self.mean) / self.std


class Compose:
    """torchvision's ``Compose``: the transforms in order."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        self.transforms = list(transforms)

    def __call__(self, item: torch.Tensor) -> torch.Tensor:
        for transform in self.transforms:
            item = transform(item)
        return item


class MNIST(Dataset[tuple[Any, int]]):
    """torchvision's ``MNIST`` signature; 28x28 uint8 digits (``.data``), ``.targets``; 640 train / 128 test."""

    def __init__(
        self,
        root: str = "",
        train: bool = True,
        transform: Transform | None = None,
        target_transform: Callable[[int], Any] | None = None,
        download: bool = False,
    ) -> None:
        self.root, self.train, self.transform, self.target_transform = root, train, transform, target_transform
        self.data, self.targets = _class_images(640 if train else 128, (28, 28), 10, seed=0 if train else 1)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        image: Any = self.data[index]
        target: Any = int(self.targets[index])
        image = self.transform(image) if self.transform is not None else ToTensor()(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class CIFAR10(Dataset[tuple[Any, int]]):
    """torchvision's ``CIFAR10`` signature; 32x32x3 uint8 images (``.data``, HWC), ``.targets``; 256 / 128."""

    def __init__(
        self,
        root: str = "",
        train: bool = True,
        transform: Transform | None = None,
        target_transform: Callable[[int], Any] | None = None,
        download: bool = False,
    ) -> None:
        self.root, self.train, self.transform, self.target_transform = root, train, transform, target_transform
        images, targets = _class_images(256 if train else 128, (32, 32, 3), 10, seed=2 if train else 3)
        self.data, self.targets = images, targets.tolist()

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        image: Any = self.data[index]
        target: Any = self.targets[index]
        image = self.transform(image) if self.transform is not None else ToTensor()(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class ImageFolder(Dataset[tuple[torch.Tensor, int]]):
    """The cats-and-dogs folders of ``computer_vision_fine_tuning.py``: two classes of 3x32x32 images."""

    def __init__(self, root: str = "", transform: Transform | None = None) -> None:
        train = "train" in str(root)
        self.data, self.targets = _class_images(64 if train else 32, (32, 32, 3), 2, seed=4 if train else 5)
        self.transform = transform

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image = ToTensor()(self.data[index])
        return (self.transform(image) if self.transform else image), int(self.targets[index])


class WikiText2(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """``lightning.pytorch.demos.WikiText2``'s interface: ``(input, target)`` token blocks and ``vocab_size``.

    The tokens follow a fixed random bigram table, so a language model has something to learn.
    """

    def __init__(self, data_dir: str = "", block_size: int = 35, download: bool = True, num_tokens: int = 6000) -> None:
        self.block_size = block_size
        self.vocab = 64
        generator = torch.Generator().manual_seed(6)
        successor = torch.randint(self.vocab, (self.vocab, 2), generator=generator)
        tokens = [0]
        choices = torch.randint(2, (num_tokens,), generator=generator)
        for choice in choices.tolist():
            tokens.append(int(successor[tokens[-1], choice]))
        self.data = torch.tensor(tokens)

    @property
    def vocab_size(self) -> int:
        return self.vocab

    def __len__(self) -> int:
        return len(self.data) // self.block_size - 1

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        start = index * self.block_size
        chunk = self.data[start : start + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def make_grid(
    tensor: torch.Tensor | list[torch.Tensor],
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: tuple[float, float] | None = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
    range: tuple[float, float] | None = None,  # the old torchvision name the UvA notebook passes
) -> torch.Tensor:
    """torchvision's ``make_grid``: a batch of CHW images laid out ``nrow`` to a row, as one CHW image."""
    images = torch.stack(list(tensor)) if isinstance(tensor, list) else tensor
    if images.ndim == 3:
        images = images.unsqueeze(1)
    if images.size(1) == 1:
        images = images.repeat(1, 3, 1, 1)
    images = images.detach().float().clone()
    limits = value_range or range
    if normalize:
        low, high = limits if limits is not None else (float(images.min()), float(images.max()))
        images = images.clamp(low, high).sub(low).div(max(high - low, 1e-5))
    count, channels, height, width = images.shape
    columns = min(nrow, count)
    rows = math.ceil(count / columns)
    cell_h, cell_w = height + padding, width + padding
    grid = images.new_full((channels, rows * cell_h + padding, columns * cell_w + padding), pad_value)
    for k in torch.arange(count).tolist():
        row, column = divmod(k, columns)
        top, left = row * cell_h + padding, column * cell_w + padding
        grid[:, top : top + height, left : left + width] = images[k]
    return grid


def get_torchvision_model(name: str, weights: str | None = None) -> nn.Module:
    """A small random network in place of a downloaded pretrained ResNet.

    Like a torchvision ResNet its children end with a global pool and an ``fc`` layer, and the pooled
    features are 2048 wide, which is what ``computer_vision_fine_tuning.py`` cuts off and builds on.
    """

    class SmallResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
            self.layer2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
            self.layer3 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU())
            self.layer4 = nn.Sequential(nn.Conv2d(64, 2048, 1), nn.BatchNorm2d(2048), nn.ReLU())
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.avgpool(self.layer4(self.layer3(self.layer2(self.layer1(x)))))
            return self.fc(torch.flatten(x, 1))  # type: ignore[no-any-return]

    return SmallResNet()


def report(**values: Any) -> None:
    """Writes what the runner compares to ``results.json`` in the working folder (added to each project)."""
    import json

    def plain(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.item() if value.numel() == 1 else value.tolist()
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    with open("results.json", "w") as file:
        json.dump(plain(values), file, indent=1, sort_keys=True)


def weights_digest(module: nn.Module) -> float:
    """One number that changes when any trained weight does: the sum of the absolute parameter values."""
    with torch.no_grad():
        return float(sum(p.detach().double().abs().sum() for p in module.parameters()))


# ---- gym: the CartPole environment the reinforcement-learning examples train on ----------------------------
class Discrete:
    """gym's ``spaces.Discrete``: actions ``0 .. n-1``, sampled from the space's own seeded generator."""

    def __init__(self, n: int, seed: int = 0) -> None:
        self.n = n
        self.shape: tuple[int, ...] = ()
        self._random = np.random.RandomState(seed)

    def sample(self) -> int:
        return int(self._random.randint(self.n))


class Box:
    """gym's ``spaces.Box``: a bounded float32 array of ``shape``."""

    def __init__(self, low: np.ndarray, high: np.ndarray) -> None:
        self.low, self.high = low.astype(np.float32), high.astype(np.float32)
        self.shape: tuple[int, ...] = tuple(low.shape)


class CartPole:
    """The classic cart-pole balance (Barto, Sutton & Anderson 1983) with the old gym API the examples call.

    ``reset()`` gives the observation alone and ``step(action)`` the 4-tuple ``(obs, reward, done, info)``
    (gym < 0.26). A pole more than 12 degrees off vertical, a cart more than 2.4 off centre, or
    ``max_episode_steps`` steps end an episode. Starts and random actions come from generators seeded
    here, so two runs of an example that seeds torch give the same episodes.
    """

    def __init__(self, max_episode_steps: int, seed: int = 0) -> None:
        self.max_episode_steps = max_episode_steps
        self._random = np.random.RandomState(seed)
        limits = np.array([4.8, np.finfo(np.float32).max, 0.42, np.finfo(np.float32).max])
        self.observation_space = Box(-limits, limits)
        self.action_space = Discrete(2, seed=seed + 1)
        self._state = np.zeros(4)
        self._steps = 0

    def reset(self) -> np.ndarray:
        self._state = self._random.uniform(-0.05, 0.05, size=4)
        self._steps = 0
        return self._state.astype(np.float32)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, dict[str, Any]]:
        gravity, cart_mass, pole_mass, half_length, force_mag, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
        x, x_dot, theta, theta_dot = self._state
        force = force_mag if int(action) == 1 else -force_mag
        total_mass = cart_mass + pole_mass
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_mass * half_length * theta_dot**2 * sin) / total_mass
        theta_acc = (gravity * sin - cos * temp) / (half_length * (4.0 / 3.0 - pole_mass * cos**2 / total_mass))
        x_acc = temp - pole_mass * half_length * theta_acc * cos / total_mass
        x, x_dot = x + dt * x_dot, x_dot + dt * x_acc
        theta, theta_dot = theta + dt * theta_dot, theta_dot + dt * theta_acc
        self._state = np.array([x, x_dot, theta, theta_dot])
        self._steps += 1
        fallen = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
        done = bool(fallen or self._steps >= self.max_episode_steps)
        return self._state.astype(np.float32), 1.0, done, {}


def _make_env(name: str) -> CartPole:
    episode_steps = {"CartPole-v0": 200, "CartPole-v1": 500}
    if name not in episode_steps:
        raise ValueError(f"the stand-in gym has only {sorted(episode_steps)}, not {name!r}")
    return CartPole(episode_steps[name])


#: What the examples reach through ``import gym``: ``gym.make``, ``gym.Env``, ``gym.spaces.box.Box`` ...
gym = SimpleNamespace(
    make=_make_env,
    Env=CartPole,
    spaces=SimpleNamespace(box=SimpleNamespace(Box=Box), discrete=SimpleNamespace(Discrete=Discrete)),
)


# ---- more of torchvision ----------------------------------------------------------------------------------
class RandomHorizontalFlip:
    """torchvision's ``RandomHorizontalFlip`` on a CHW tensor, drawing from torch's global generator."""

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, image: torch.Tensor) -> torch.Tensor:
        return image.flip(-1) if float(torch.rand(1)) < self.p else image


def save_image(tensor: torch.Tensor, fp: str, **grid: Any) -> None:
    """torchvision's ``save_image``: the batch laid out by ``make_grid`` and written as an 8-bit PNG."""
    from PIL import Image

    image = make_grid(tensor, **grid) if tensor.ndim == 4 or isinstance(tensor, list) else tensor
    pixels = image.mul(255).add(0.5).clamp(0, 255).to(torch.uint8).permute(1, 2, 0).numpy()
    Image.fromarray(pixels).save(fp)
