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


# ---- the bug-report classes (lightning.pytorch.demos.boring_classes) and the LSTM demo ---------------------------
def _both(name: str, *args: object, seed: int = 3) -> tuple[object, object]:
    """accelplug's and Lightning's ``name`` from ``boring_classes`` (or ``lstm``), each built after the same seed."""
    import importlib

    module = "lstm" if name in ("SimpleLSTM", "SequenceSampler", "LightningLSTM") else "boring_classes"
    built = []
    for root in ("accelplug.pytorch.demos", "lightning.pytorch.demos"):
        torch.manual_seed(seed)
        built.append(getattr(importlib.import_module(f"{root}.{module}"), name)(*args))
    return built[0], built[1]


@pytest.mark.parametrize("name", ["RandomDataset", "RandomDictDataset"])
def test_a_random_dataset_draws_lightnings_values(name: str) -> None:
    mine, theirs = _both(name, 5, 7)
    assert len(mine) == len(theirs) == 7  # type: ignore[arg-type]
    for index in range(7):
        torch.testing.assert_close(mine[index], theirs[index], rtol=0, atol=0)  # type: ignore[index]


@pytest.mark.parametrize("name", ["RandomIterableDataset", "RandomIterableDatasetWithLen"])
def test_a_random_iterable_dataset_draws_lightnings_values_as_it_is_iterated(name: str) -> None:
    mine, theirs = _both(name, 3, 4)
    torch.manual_seed(5)
    ours = list(mine)  # type: ignore[call-overload]
    torch.manual_seed(5)
    assert len(ours) == 4 and torch.equal(torch.stack(ours), torch.stack(list(theirs)))  # type: ignore[call-overload]
    assert hasattr(mine, "__len__") == hasattr(theirs, "__len__")


@pytest.mark.parametrize("name", ["BoringModel", "ManualOptimBoringModel", "DemoModel", "SimpleLSTM"])
def test_a_demo_model_starts_from_lightnings_weights(name: str) -> None:
    mine, theirs = _both(name)
    ours, lightnings = mine.state_dict(), theirs.state_dict()  # type: ignore[attr-defined]
    assert list(ours) == list(lightnings)
    for key, value in lightnings.items():
        assert torch.equal(ours[key], value), key


def test_the_boring_model_computes_lightnings_loss_and_optimizer() -> None:
    mine, theirs = _both("BoringModel")
    batch = torch.randn(4, 32)
    torch.testing.assert_close(mine.step(batch), theirs.step(batch))  # type: ignore[attr-defined]
    assert mine.training_step(batch, 0).keys() == {"loss"}  # type: ignore[attr-defined]
    assert mine.validation_step(batch, 0).keys() == {"x"}  # type: ignore[attr-defined]
    assert mine.test_step(batch, 0).keys() == {"y"}  # type: ignore[attr-defined]
    (optimizer,), (scheduler,) = mine.configure_optimizers()  # type: ignore[attr-defined]
    assert type(optimizer) is torch.optim.SGD and optimizer.defaults["lr"] == 0.1
    assert type(scheduler) is torch.optim.lr_scheduler.StepLR and scheduler.step_size == 1
    assert [len(getattr(mine, f"{s}_dataloader")()) for s in ("train", "val", "test", "predict")] == [64] * 4


@pytest.mark.parametrize("name", ["BoringDataModule", "BoringDataModuleNoLen", "IterableBoringDataModule"])
def test_a_demo_datamodule_gives_lightnings_loaders_per_stage(name: str) -> None:
    mine, theirs = _both(name)
    for stage, loader in [("fit", "train"), ("validate", "val"), ("test", "test"), ("predict", "predict")]:
        for side in (mine, theirs):
            torch.manual_seed(8)  # setup draws the datasets with lengths
            side.setup(stage)  # type: ignore[attr-defined]
        torch.manual_seed(9)  # the iterable datasets draw while iterated
        ours = [list(d) for d in _as_list(getattr(mine, f"{loader}_dataloader")())]
        torch.manual_seed(9)
        lightnings = [list(d) for d in _as_list(getattr(theirs, f"{loader}_dataloader")())]
        assert [len(d) for d in ours] == [len(d) for d in lightnings]
        for a, b in zip(ours, lightnings, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


def _as_list(loaders: object) -> list[object]:
    return list(loaders) if isinstance(loaders, list) else [loaders]


def test_the_sequence_sampler_reads_each_stream_in_order() -> None:
    from accelplug.pytorch.demos import SequenceSampler

    sampler = SequenceSampler(range(10), batch_size=3)
    assert list(sampler) == list(demos.SequenceSampler(range(10), batch_size=3)) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert len(sampler) == 3


def test_wikitext_is_tokenized_as_lightnings(tmp_path: object) -> None:
    from pathlib import Path

    from lightning.pytorch.demos import transformer as theirs

    from accelplug.pytorch.demos import WikiText2
    from accelplug.pytorch.demos.transformer import tokenize

    folder = Path(str(tmp_path))
    (folder / "wikitext-2.txt").write_text(" = Valkyria = \n\n the game began in 2010 , the game \n", encoding="utf8")
    ids, dictionary = tokenize(folder / "wikitext-2.txt")
    their_ids, their_dictionary = theirs.tokenize(folder / "wikitext-2.txt")
    assert torch.equal(ids, their_ids) and dictionary.idx2word == their_dictionary.idx2word
    data = WikiText2(folder, block_size=3, download=False)  # the file is there: nothing is fetched
    lightnings = theirs.WikiText2(folder, block_size=3, download=False)
    assert len(data) == len(lightnings) and data.vocab_size == lightnings.vocab_size
    for index in range(len(data)):
        for a, b in zip(data[index], lightnings[index], strict=True):
            assert torch.equal(a, b)


def test_a_boring_model_fits_to_lightnings_weights(tmp_path: object) -> None:
    """The bug-report model trained by either Trainer ends with the same weights."""
    import lightning.pytorch as lpl

    import accelplug.pytorch as apl

    weights = []
    for pl in (apl, lpl):
        torch.manual_seed(1)
        model = pl.demos.BoringModel()
        trainer = pl.Trainer(
            default_root_dir=str(tmp_path),
            max_epochs=2,
            limit_train_batches=3,
            limit_val_batches=0,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
        )
        trainer.fit(model)
        weights.append(model.layer.weight.detach().clone())
    torch.testing.assert_close(weights[0], weights[1], rtol=0, atol=0)
