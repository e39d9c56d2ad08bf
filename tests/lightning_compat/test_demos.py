"""``accelplug.pytorch.demos.Transformer`` against ``lightning.pytorch.demos.Transformer``: one seed gives the
same weights, and the same inputs the same outputs and gradients, so a migrated project's results match."""

from __future__ import annotations

import pytest
import torch

from accelplug.pytorch.demos import Transformer

demos = pytest.importorskip("lightning.pytorch.demos", reason="the parity side needs Lightning installed")

SMALL = {"vocab_size": 40, "ninp": 16, "nhead": 2, "nhid": 24, "nlayers": 2, "dropout": 0.2}


def _pair(**kwargs: object) -> tuple[torch.nn.Module, torch.nn.Module]:
    torch.manual_seed(11)
    theirs = demos.Transformer(**kwargs)
    torch.manual_seed(11)
    return Transformer(**kwargs), theirs  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{}, SMALL], ids=["defaults", "small"])
def test_one_seed_gives_lightnings_parameters_in_lightnings_order(kwargs: dict[str, object]) -> None:
    mine, theirs = _pair(**kwargs)
    ours, lightnings = mine.state_dict(), theirs.state_dict()
    assert list(ours) == list(lightnings)
    for name, value in lightnings.items():
        assert torch.equal(ours[name], value), name


def test_training_steps_give_lightnings_outputs_and_weights() -> None:
    mine, theirs = _pair(**SMALL)
    generator = torch.Generator().manual_seed(0)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (mine, theirs)]
    for step in range(3):
        inputs = torch.randint(0, 40, (4, 9), generator=generator)
        target = torch.randint(0, 40, (4, 9), generator=generator)
        losses = []
        for model, optimizer in zip((mine, theirs), optimizers, strict=True):
            torch.manual_seed(step)  # the same dropout masks on both sides
            output = model(inputs, target)
            assert output.shape == (4 * 9, 40)
            loss = torch.nn.functional.nll_loss(output, target.view(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[0], losses[1], rtol=0, atol=0)
    for (name, ours), lightnings in zip(mine.state_dict().items(), theirs.state_dict().values(), strict=True):
        torch.testing.assert_close(ours, lightnings, rtol=0, atol=0, msg=name)
    mine.eval()
    theirs.eval()
    inputs = torch.randint(0, 40, (2, 5), generator=generator)
    torch.testing.assert_close(mine(inputs, inputs), theirs(inputs, inputs), rtol=0, atol=0)
    torch.testing.assert_close(mine.generate_square_subsequent_mask(6), theirs.generate_square_subsequent_mask(6))
