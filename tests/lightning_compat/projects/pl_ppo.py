"""Lightning's own example: proximal policy optimization (PPO) on CartPole, optimized by hand.

Source:    Lightning-AI/pytorch-lightning at commit 215acdc3efa4b096c80ab2d0263cab20d2f06f54
           (https://github.com/Lightning-AI/pytorch-lightning),
           examples/pytorch/domain_templates/reinforce_learn_ppo.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``from lightning.pytorch import LightningModule, Trainer, cli_lightning_logo,
           seed_everything``, save_hyperparameters(), automatic_optimization = False, self.device,
           training_step(self, batch) without batch_idx, self.log of plain floats with on_step=False,
           on_epoch=True, prog_bar, self.optimizers() giving two optimizers, manual_backward, an overridden
           optimizer_step calling super() several times, configure_optimizers returning a tuple of two
           Adams, a train_dataloader over an IterableDataset whose generator plays the environment,
           seed_everything(0), cli_lightning_logo() and Trainer(accelerator="cpu", devices=1,
           val_check_interval=100) with fit(model).
Changes:   - ``import gym`` -> the stand-in CartPole of _synthetic.py (the old gym API the example calls).
           - ``Trainer(...)`` gets ``max_epochs=3`` (the example runs Lightning's default 1000 epochs);
             steps_per_epoch 2048 -> 256, batch_size 512 -> 64, hidden layers 128 -> 32 wide.
           - added: the last line of ``main`` writes results.json for the runner.
Exercises: manual optimization with two optimizers and epoch-level logging of Python floats, a training
           batch made by a generator of the module itself (self.device read inside the data loader),
           hyper-parameters saved from **vars(args), TensorBoard and hparams.yaml by default.
"""

import argparse
from collections.abc import Callable, Iterator

import torch
from _synthetic import gym, report, weights_digest
from lightning.pytorch import LightningModule, Trainer, cli_lightning_logo, seed_everything
from torch import nn
from torch.distributions import Categorical, Normal
from torch.optim.optimizer import Optimizer
from torch.utils.data import DataLoader, IterableDataset


def create_mlp(input_shape: tuple[int], n_actions: int, hidden_size: int = 32):
    return nn.Sequential(
        nn.Linear(input_shape[0], hidden_size),
        nn.ReLU(),
        nn.Linear(hidden_size, hidden_size),
        nn.ReLU(),
        nn.Linear(hidden_size, n_actions),
    )


class ActorCategorical(nn.Module):
    """A policy over discrete actions: the distribution and an action drawn from it."""

    def __init__(self, actor_net):
        super().__init__()
        self.actor_net = actor_net

    def forward(self, states):
        pi = Categorical(logits=self.actor_net(states))
        return pi, pi.sample()

    def get_log_prob(self, pi: Categorical, actions: torch.Tensor):
        return pi.log_prob(actions)


class ActorContinuous(nn.Module):
    """A Gaussian policy over continuous actions with a learned log standard deviation."""

    def __init__(self, actor_net, act_dim):
        super().__init__()
        self.actor_net = actor_net
        self.log_std = nn.Parameter(-0.5 * torch.ones(act_dim, dtype=torch.float))

    def forward(self, states):
        pi = Normal(loc=self.actor_net(states), scale=torch.exp(self.log_std))
        return pi, pi.sample()

    def get_log_prob(self, pi: Normal, actions: torch.Tensor):
        return pi.log_prob(actions).sum(axis=-1)


class ExperienceSourceDataset(IterableDataset):
    """Iterates whatever the module's generator yields (the example's, after Lightning Bolts')."""

    def __init__(self, generate_batch: Callable):
        self.generate_batch = generate_batch

    def __iter__(self) -> Iterator:
        return self.generate_batch()


class PPOLightning(LightningModule):
    def __init__(
        self,
        env: str,
        gamma: float = 0.99,
        lam: float = 0.95,
        lr_actor: float = 3e-4,
        lr_critic: float = 1e-3,
        max_episode_len: float = 200,
        batch_size: int = 512,
        steps_per_epoch: int = 2048,
        nb_optim_iters: int = 4,
        clip_ratio: float = 0.2,
        **kwargs,
    ) -> None:
        super().__init__()
        self.lr_actor = lr_actor
        self.lr_critic = lr_critic
        self.steps_per_epoch = steps_per_epoch
        self.nb_optim_iters = nb_optim_iters
        self.batch_size = batch_size
        self.gamma = gamma
        self.lam = lam
        self.max_episode_len = max_episode_len
        self.clip_ratio = clip_ratio
        self.save_hyperparameters()

        self.automatic_optimization = False

        self.env = gym.make(env)
        self.critic = create_mlp(self.env.observation_space.shape, 1)
        if isinstance(self.env.action_space, gym.spaces.box.Box):
            act_dim = self.env.action_space.shape[0]
            self.actor = ActorContinuous(create_mlp(self.env.observation_space.shape, act_dim), act_dim)
        elif isinstance(self.env.action_space, gym.spaces.discrete.Discrete):
            self.actor = ActorCategorical(create_mlp(self.env.observation_space.shape, self.env.action_space.n))
        else:
            raise NotImplementedError(f"Box or Discrete action spaces only, not {type(self.env.action_space)}")

        self.batch_states = []
        self.batch_actions = []
        self.batch_adv = []
        self.batch_qvals = []
        self.batch_logp = []

        self.ep_rewards = []
        self.ep_values = []
        self.epoch_rewards = []

        self.episode_step = 0
        self.avg_ep_reward = 0
        self.avg_ep_len = 0
        self.avg_reward = 0

        self.state = torch.FloatTensor(self.env.reset())

    def forward(self, x: torch.Tensor):
        pi, action = self.actor(x)
        return pi, action, self.critic(x)

    def discount_rewards(self, rewards: list[float], discount: float) -> list[float]:
        assert isinstance(rewards[0], float)
        running, out = 0.0, []
        for r in reversed(rewards):
            running = running * discount + r
            out.append(running)
        return list(reversed(out))

    def calc_advantage(self, rewards: list[float], values: list[float], last_value: float) -> list[float]:
        rews = [*rewards, last_value]
        vals = [*values, last_value]
        delta = [rews[i] + self.gamma * vals[i + 1] - vals[i] for i in range(len(rews) - 1)]
        return self.discount_rewards(delta, self.gamma * self.lam)

    def generate_trajectory_samples(self):
        for step in range(self.steps_per_epoch):
            self.state = self.state.to(device=self.device)
            with torch.no_grad():
                pi, action, value = self(self.state)
                log_prob = self.actor.get_log_prob(pi, action)

            next_state, reward, done, _ = self.env.step(action.cpu().numpy())
            self.episode_step += 1

            self.batch_states.append(self.state)
            self.batch_actions.append(action)
            self.batch_logp.append(log_prob)
            self.ep_rewards.append(reward)
            self.ep_values.append(value.item())
            self.state = torch.FloatTensor(next_state)

            epoch_end = step == (self.steps_per_epoch - 1)
            terminal = len(self.ep_rewards) == self.max_episode_len

            if epoch_end or done or terminal:
                if (terminal or epoch_end) and not done:
                    self.state = self.state.to(device=self.device)
                    with torch.no_grad():
                        _, _, value = self(self.state)
                        last_value = value.item()
                        steps_before_cutoff = self.episode_step
                else:
                    last_value = 0
                    steps_before_cutoff = 0

                self.batch_qvals += self.discount_rewards([*self.ep_rewards, last_value], self.gamma)[:-1]
                self.batch_adv += self.calc_advantage(self.ep_rewards, self.ep_values, last_value)
                self.epoch_rewards.append(sum(self.ep_rewards))
                self.ep_rewards = []
                self.ep_values = []
                self.episode_step = 0
                self.state = torch.FloatTensor(self.env.reset())

            if epoch_end:
                yield from zip(
                    self.batch_states,
                    self.batch_actions,
                    self.batch_logp,
                    self.batch_qvals,
                    self.batch_adv,
                    strict=False,
                )

                self.batch_states.clear()
                self.batch_actions.clear()
                self.batch_adv.clear()
                self.batch_logp.clear()
                self.batch_qvals.clear()

                self.avg_reward = sum(self.epoch_rewards) / self.steps_per_epoch
                epoch_rewards = self.epoch_rewards if done else self.epoch_rewards[:-1]
                nb_episodes = len(epoch_rewards)
                self.avg_ep_reward = sum(epoch_rewards) / nb_episodes
                self.avg_ep_len = (self.steps_per_epoch - steps_before_cutoff) / nb_episodes
                self.epoch_rewards.clear()

    def actor_loss(self, state, action, logp_old, qval, adv) -> torch.Tensor:
        pi, _ = self.actor(state)
        ratio = torch.exp(self.actor.get_log_prob(pi, action) - logp_old)
        clip_adv = torch.clamp(ratio, 1 - self.clip_ratio, 1 + self.clip_ratio) * adv
        return -(torch.min(ratio * adv, clip_adv)).mean()

    def critic_loss(self, state, action, logp_old, qval, adv) -> torch.Tensor:
        return (qval - self.critic(state)).pow(2).mean()

    def training_step(self, batch):
        state, action, old_logp, qval, adv = batch
        adv = (adv - adv.mean()) / adv.std()

        self.log("avg_ep_len", self.avg_ep_len, prog_bar=True, on_step=False, on_epoch=True)
        self.log("avg_ep_reward", self.avg_ep_reward, prog_bar=True, on_step=False, on_epoch=True)
        self.log("avg_reward", self.avg_reward, prog_bar=True, on_step=False, on_epoch=True)

        optimizer_actor, optimizer_critic = self.optimizers()

        loss_actor = self.actor_loss(state, action, old_logp, qval, adv)
        self.manual_backward(loss_actor)
        optimizer_actor.step()
        optimizer_actor.zero_grad()

        loss_critic = self.critic_loss(state, action, old_logp, qval, adv)
        self.manual_backward(loss_critic)
        optimizer_critic.step()
        optimizer_critic.zero_grad()

        self.log("loss_critic", loss_critic, on_step=False, on_epoch=True, prog_bar=False, logger=True)
        self.log("loss_actor", loss_actor, on_step=False, on_epoch=True, prog_bar=True, logger=True)

    def configure_optimizers(self) -> list[Optimizer]:
        optimizer_actor = torch.optim.Adam(self.actor.parameters(), lr=self.lr_actor)
        optimizer_critic = torch.optim.Adam(self.critic.parameters(), lr=self.lr_critic)
        return optimizer_actor, optimizer_critic

    def optimizer_step(self, *args, **kwargs):
        """Each batch trains ``nb_optim_iters`` times (the example's; manual optimization never calls it)."""
        for _ in range(self.nb_optim_iters):
            super().optimizer_step(*args, **kwargs)

    def _dataloader(self) -> DataLoader:
        return DataLoader(dataset=ExperienceSourceDataset(self.generate_trajectory_samples), batch_size=self.batch_size)

    def train_dataloader(self) -> DataLoader:
        return self._dataloader()


def main(args) -> None:
    model = PPOLightning(**vars(args))
    trainer = Trainer(accelerator="cpu", devices=1, val_check_interval=100, max_epochs=3)
    trainer.fit(model)
    report(
        global_step=trainer.global_step,
        epoch=trainer.current_epoch,
        metrics={k: float(v) for k, v in trainer.callback_metrics.items()},
        logged={k: float(v) for k, v in trainer.logged_metrics.items()},
        progress_bar=sorted(trainer.progress_bar_metrics),
        hparams=dict(model.hparams),
        actor=weights_digest(model.actor),
        critic=weights_digest(model.critic),
    )


if __name__ == "__main__":
    cli_lightning_logo()
    seed_everything(0)

    parser = argparse.ArgumentParser()
    parser.add_argument("--env", type=str, default="CartPole-v0")
    parser.add_argument("--gamma", type=float, default=0.99, help="discount factor")
    parser.add_argument("--lam", type=float, default=0.95, help="advantage discount factor")
    parser.add_argument("--lr_actor", type=float, default=3e-4, help="learning rate of actor network")
    parser.add_argument("--lr_critic", type=float, default=1e-3, help="learning rate of critic network")
    parser.add_argument("--max_episode_len", type=int, default=1000, help="capacity of the replay buffer")
    parser.add_argument("--batch_size", type=int, default=64, help="batch_size when training network")
    parser.add_argument("--steps_per_epoch", type=int, default=256, help="action-state pairs rolled out per epoch")
    parser.add_argument("--nb_optim_iters", type=int, default=4, help="gradient steps on each batch")
    parser.add_argument("--clip_ratio", type=float, default=0.2, help="clipping in the policy objective")
    main(parser.parse_args())
