"""Lightning's own example: a deep Q-network learning CartPole from a replay buffer.

Source:    Lightning-AI/pytorch-lightning at commit 1dc28c2aacec790ef9943441445863e0f775dd49
           (https://github.com/Lightning-AI/pytorch-lightning),
           examples/pytorch/domain_templates/reinforce_learn_Qnet.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``from lightning.pytorch import LightningModule, Trainer, cli_lightning_logo,
           seed_everything``, ``LightningModule.__init__(**kwargs)``, training_step(batch, nb_batch) reading
           self.global_step and self.on_gpu and returning an OrderedDict with "loss" beside Lightning 0.x's
           "log" and "progress_bar" dicts (ignored by Lightning 2), configure_optimizers returning a list of
           one Adam, a train_dataloader over an IterableDataset without a length, seed_everything(0),
           cli_lightning_logo() and Trainer(accelerator="cpu", devices=1, val_check_interval=100) with fit(model).
Changes:   - ``import gym`` -> the stand-in CartPole of _synthetic.py (the old gym API the example calls:
             reset() -> obs, step() -> (obs, reward, done, info)).
           - ``Trainer(...)`` gets ``max_epochs=10`` (the example runs Lightning's default 1000 epochs);
             warm start, replay size and epsilon decay 1000 -> 300 steps, episode_length 200 -> 64.
           - added: the last line of ``main`` writes results.json for the runner.
Exercises: an IterableDataset rebuilt each epoch with no length (so val_check_interval=100 with no
           validation loop), extra keys in the dict training_step returns, self.global_step inside a step,
           load_state_dict into a second network mid-fit, seeded reproducible training.
"""

import argparse
import random
from collections import OrderedDict, deque, namedtuple
from collections.abc import Iterator

import torch
import torch.nn as nn
import torch.optim as optim
from _synthetic import gym, report, weights_digest
from lightning.pytorch import LightningModule, Trainer, cli_lightning_logo, seed_everything
from torch.optim.optimizer import Optimizer
from torch.utils.data import DataLoader
from torch.utils.data.dataset import IterableDataset


class DQN(nn.Module):
    """An MLP from an observation to one Q-value per action."""

    def __init__(self, obs_size: int, n_actions: int, hidden_size: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, n_actions))

    def forward(self, x):
        return self.net(x.float())


Experience = namedtuple("Experience", field_names=["state", "action", "reward", "done", "new_state"])


class ReplayBuffer:
    """The last ``capacity`` transitions, sampled uniformly."""

    def __init__(self, capacity: int) -> None:
        self.buffer = deque(maxlen=capacity)

    def __len__(self) -> int:
        return len(self.buffer)

    def append(self, experience: Experience) -> None:
        self.buffer.append(experience)

    def sample(self, batch_size: int) -> tuple:
        picked = random.sample(range(len(self.buffer)), batch_size)
        states, actions, rewards, dones, next_states = zip(*(self.buffer[i] for i in picked), strict=False)
        return (
            torch.tensor(states),
            torch.tensor(actions),
            torch.tensor(rewards, dtype=torch.float32),
            torch.tensor(dones, dtype=torch.bool),
            torch.tensor(next_states),
        )


class RLDataset(IterableDataset):
    """A fresh sample of the buffer each time it is iterated; it grows while training runs."""

    def __init__(self, buffer: ReplayBuffer, sample_size: int = 200) -> None:
        self.buffer = buffer
        self.sample_size = sample_size

    def __iter__(self) -> Iterator:
        states, actions, rewards, dones, new_states = self.buffer.sample(self.sample_size)
        for i in range(len(dones)):
            yield states[i], actions[i], rewards[i], dones[i], new_states[i]


class Agent:
    """Plays the environment epsilon-greedily and records each transition in the buffer."""

    def __init__(self, env: gym.Env, replay_buffer: ReplayBuffer) -> None:
        self.env = env
        self.replay_buffer = replay_buffer
        self.reset()
        self.state = self.env.reset()

    def reset(self) -> None:
        self.state = self.env.reset()

    def get_action(self, net: nn.Module, epsilon: float, device: str) -> int:
        if random.random() < epsilon:
            return self.env.action_space.sample()
        state = torch.tensor([self.state])
        if device not in ["cpu"]:
            state = state.cuda(device)
        _, action = torch.max(net(state), dim=1)
        return int(action.item())

    @torch.no_grad()
    def play_step(self, net: nn.Module, epsilon: float = 0.0, device: str = "cpu") -> tuple[float, bool]:
        action = self.get_action(net, epsilon, device)
        new_state, reward, done, _ = self.env.step(action)
        self.replay_buffer.append(Experience(self.state, action, reward, done, new_state))
        self.state = new_state
        if done:
            self.reset()
        return reward, done


class DQNLightning(LightningModule):
    def __init__(
        self,
        env: str,
        replay_size: int = 200,
        warm_start_steps: int = 200,
        gamma: float = 0.99,
        eps_start: float = 1.0,
        eps_end: float = 0.01,
        eps_last_frame: int = 200,
        sync_rate: int = 10,
        lr: float = 1e-2,
        episode_length: int = 50,
        batch_size: int = 4,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.replay_size = replay_size
        self.warm_start_steps = warm_start_steps
        self.gamma = gamma
        self.eps_start = eps_start
        self.eps_end = eps_end
        self.eps_last_frame = eps_last_frame
        self.sync_rate = sync_rate
        self.lr = lr
        self.episode_length = episode_length
        self.batch_size = batch_size

        self.env = gym.make(env)
        obs_size = self.env.observation_space.shape[0]
        n_actions = self.env.action_space.n
        self.net = DQN(obs_size, n_actions)
        self.target_net = DQN(obs_size, n_actions)

        self.buffer = ReplayBuffer(self.replay_size)
        self.agent = Agent(self.env, self.buffer)
        self.total_reward = 0
        self.episode_reward = 0
        self.populate(self.warm_start_steps)

    def populate(self, steps: int = 1000) -> None:
        """Random play until the buffer holds ``steps`` transitions to learn from."""
        for _ in range(steps):
            self.agent.play_step(self.net, epsilon=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def dqn_mse_loss(self, batch) -> torch.Tensor:
        states, actions, rewards, dones, next_states = batch
        state_action_values = self.net(states).gather(1, actions.unsqueeze(-1)).squeeze(-1)
        with torch.no_grad():
            next_state_values = self.target_net(next_states).max(1)[0]
            next_state_values[dones] = 0.0
            next_state_values = next_state_values.detach()
        expected = next_state_values * self.gamma + rewards
        return nn.MSELoss()(state_action_values, expected)

    def training_step(self, batch, nb_batch) -> OrderedDict:
        device = self.get_device(batch)
        epsilon = max(self.eps_end, self.eps_start - (self.global_step + 1) / self.eps_last_frame)

        reward, done = self.agent.play_step(self.net, epsilon, device)
        self.episode_reward += reward
        loss = self.dqn_mse_loss(batch)
        if done:
            self.total_reward = self.episode_reward
            self.episode_reward = 0

        if self.global_step % self.sync_rate == 0:
            self.target_net.load_state_dict(self.net.state_dict())

        log = {
            "total_reward": torch.tensor(self.total_reward).to(device),
            "reward": torch.tensor(reward).to(device),
            "steps": torch.tensor(self.global_step).to(device),
        }
        return OrderedDict({"loss": loss, "log": log, "progress_bar": log})

    def configure_optimizers(self) -> list[Optimizer]:
        return [optim.Adam(self.net.parameters(), lr=self.lr)]

    def __dataloader(self) -> DataLoader:
        dataset = RLDataset(self.buffer, self.episode_length)
        return DataLoader(dataset=dataset, batch_size=self.batch_size, sampler=None)

    def train_dataloader(self) -> DataLoader:
        return self.__dataloader()

    def get_device(self, batch) -> str:
        return batch[0].device.index if self.on_gpu else "cpu"


def main(args) -> None:
    model = DQNLightning(**vars(args))
    trainer = Trainer(accelerator="cpu", devices=1, val_check_interval=100, max_epochs=10)
    trainer.fit(model)
    report(
        global_step=trainer.global_step,
        epoch=trainer.current_epoch,
        total_reward=model.total_reward,
        buffer=len(model.buffer),
        weights=weights_digest(model.net),
        target_weights=weights_digest(model.target_net),
        logged=sorted(trainer.callback_metrics),
    )


if __name__ == "__main__":
    cli_lightning_logo()
    seed_everything(0)

    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=16, help="size of the batches")
    parser.add_argument("--lr", type=float, default=1e-2, help="learning rate")
    parser.add_argument("--env", type=str, default="CartPole-v1", help="gym environment tag")
    parser.add_argument("--gamma", type=float, default=0.99, help="discount factor")
    parser.add_argument("--sync_rate", type=int, default=10, help="how many frames do we update the target network")
    parser.add_argument("--replay_size", type=int, default=300, help="capacity of the replay buffer")
    parser.add_argument("--warm_start_steps", type=int, default=300, help="random steps filling the buffer first")
    parser.add_argument("--eps_last_frame", type=int, default=300, help="what frame should epsilon stop decaying")
    parser.add_argument("--eps_start", type=float, default=1.0, help="starting value of epsilon")
    parser.add_argument("--eps_end", type=float, default=0.01, help="final value of epsilon")
    parser.add_argument("--episode_length", type=int, default=64, help="max length of an episode")
    main(parser.parse_args())
