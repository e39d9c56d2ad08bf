"""The behaviours in which accelplug differs from Lightning, each with the Lightning tests that show it.

Read by ``triage.py``. One item per behaviour: what Lightning's tests expect, what accelplug does instead, the
accelplug source responsible (``file:function``, paths under ``src/accelplug/`` at the commit the triage names),
and the tests (``file::function`` covers every parametrisation; a full node id one case; ``*`` patterns allowed)
or, for a behaviour that breaks tests anywhere, the text its failures show (``messages``).
A test is counted under the first item naming it, so a test that fails for two reasons goes under the reason it
fails on first. Items of category (a) use Lightning's private internals: listed for completeness, not a target.
"""

from __future__ import annotations

from dataclasses import dataclass

AREAS = {
    "logging": "Logging: self.log, logged_metrics, callback_metrics",
    "data": "Dataloaders and reloading",
    "limits": "val_check_interval and loop limits",
    "hooks": "Hooks, their order, and the LightningModule",
    "checkpoint": "Checkpointing and ModelCheckpoint",
    "callbacks": "EarlyStopping, LearningRateMonitor, progress bar",
    "loggers": "Loggers",
    "tuner": "Tuner",
    "fabric": "Fabric",
    "flags": "Trainer flags and properties",
    "optim": "Optimization (automatic and manual)",
    "strategies": "Strategies and processes",
    "profilers": "Profilers",
    "cli": "LightningCLI",
    "paths": "Public module paths and names",
    "private": "Lightning's private internals (not the target)",
}


@dataclass(frozen=True)
class Item:
    """One behaviour: ``category`` is issue 29's letter (a-g)."""

    area: str
    title: str
    category: str
    lightning: str
    accelplug: str
    where: str
    tests: tuple[str, ...]
    #: also every failure whose first error line contains one of these (a behaviour that breaks tests anywhere)
    messages: tuple[str, ...] = ()


_P = "tests_pytorch/"
_LOG = _P + "trainer/logging_/"
_DL = _P + "trainer/test_dataloaders.py::"
_MC = _P + "checkpointing/test_model_checkpoint.py::"
_F = "tests_fabric/test_fabric.py::"
_TR = _P + "trainer/test_trainer.py::"
_L = _P + "loops/"
_T = _P + "tuner/test_scale_batch_size.py::"

ITEMS: list[Item] = [
    Item(
        "paths",
        "`LightningOptimizer` missing: `self.optimizers()` is neither a torch Optimizer nor a LightningOptimizer",
        "b",
        "`self.optimizers()` returns `lightning.pytorch.core.optimizer.LightningOptimizer` wrappers, so "
        "`isinstance(opt, (Optimizer, LightningOptimizer))` holds (Lightning's own ManualOptimBoringModel asserts it "
        "in every training step)",
        "no `core.optimizer.LightningOptimizer`; accelplug's wrapper is not an Optimizer subclass, so the demo "
        "model's assertion fails in the first step",
        "pytorch/core/__init__.py (no optimizer module), trainer/loops/managed_optimizer.py (the wrapper class)",
        (_P + "profilers/test_profiler.py::test_pytorch_profiler_trainer_fit[ManualOptimBoringModel-*",),
        messages=("boring_classes.py:283",),
    ),
    # ------------------------------------------------------------------------------------------------ logging
    Item(
        "logging",
        "A step's returned loss and returned scalars are logged",
        "e",
        "only what `self.log`/`log_dict` records reaches `logged_metrics`, `callback_metrics`, the loggers and the "
        "dicts `validate()`/`test()` return; a `training_step`'s returned loss and a `validation_step`/`test_step`'s "
        "returned dict are not logged",
        "the returned loss goes to the loggers and `logged_metrics` as `train_loss` (and every scalar of a returned "
        "dict under its key); the scalars an evaluation step returns (`x`, `y` of BoringModel) are averaged per epoch "
        "into `callback_metrics`, `logged_metrics`, the loggers and the returned results (with `/dataloader_idx_N`)",
        "trainer/loops/readback.py:read_step_metrics (output_scalars of the returned value), "
        "finish_eval_epoch (`returned` means); filled by trainer/loops/evaluation.py:EvaluationLoop._run_loader",
        (
            _LOG + "test_eval_loop_logging.py::test__validation_step__log",
            _LOG + "test_eval_loop_logging.py::test__validation_step__epoch_end__log",
            _LOG + "test_eval_loop_logging.py::test_eval_epoch_logging",
            _LOG + "test_eval_loop_logging.py::test_eval_epoch_only_logging",
            _LOG + "test_eval_loop_logging.py::test_eval_float_logging",
            _LOG + "test_eval_loop_logging.py::test_eval_logging_auto_reduce",
            _LOG + "test_eval_loop_logging.py::test_validation_step_log_with_tensorboard",
            _LOG + "test_eval_loop_logging.py::test_multi_dataloaders_add_suffix_properly[False]",
            _LOG + "test_train_loop_logging.py::test__training_step__log",
            _LOG + "test_train_loop_logging.py::test__training_step__epoch_end__log",
            _LOG + "test_train_loop_logging.py::test_different_batch_types_for_sizing",
            _LOG + "test_distributed_logging.py::test_logger_after_fit_predict_test_calls",
        ),
    ),
    Item(
        "logging",
        "With several evaluation loaders, `self.log` values get no `/dataloader_idx_N` suffix",
        "e",
        "with several val/test loaders, a value logged in a step (default `add_dataloader_idx=True`) is kept per "
        "loader as `name/dataloader_idx_N` in `callback_metrics`, `logged_metrics` and each loader's result dict; "
        "values logged in `on_*_epoch_end` join every loader's dict; `add_dataloader_idx=False` keys appear only "
        "in the loader that logged them",
        "one unsuffixed value averaged over all loaders (`foo` = 1.5 for 1 and 2), shared by every result dict",
        "trainer/loops/evaluation.py:_log_step_values, split_by_loader; trainer/logging/collector.py",
        (
            _LOG + "test_eval_loop_logging.py::test_logging_multi_dataloader_on_epoch_end",
            _LOG + "test_eval_loop_logging.py::test_logging_results_with_no_dataloader_idx",
            _LOG + "test_eval_loop_logging.py::test_multi_dataloaders_add_suffix_properly[True]",
            _LOG + "test_logger_connector.py::test_auto_add_dataloader_idx[True]",
        ),
    ),
    Item(
        "logging",
        "`logger.log_metrics` is called positionally, with a float `epoch`; `on_train_start` values are not sent",
        "e",
        "the Trainer calls `logger.log_metrics(metrics=..., step=...)` with keywords, `epoch` an int in the row; a "
        "value logged in `on_train_start` is sent at step 0",
        "`log_metrics(row, step)` positionally, `epoch` a float; the `on_train_start` value never reaches the logger",
        "trainer/run.py:Run.log_metrics; trainer/loops/fit.py (on_train_start values not published)",
        (
            _LOG + "test_train_loop_logging.py::test_log_metrics_epoch_step_values",
            _LOG + "test_train_loop_logging.py::test_log_on_train_start",
            _P + "trainer/test_trainer.py::test_log_every_n_steps",
        ),
    ),
    Item(
        "logging",
        "Step-level values logged during evaluation do not reach the loggers at each step",
        "e",
        "`self.log(..., on_step=True)` in `validation_step`/`test_step` sends a row to the loggers at every "
        "evaluation step (step = the batch index, offset by previous evaluation runs during fit; "
        "`/dataloader_idx_N` suffix with several loaders)",
        "one row at the end of evaluation (with the epoch value at the fit's step), sent positionally",
        "trainer/loops/evaluation.py:_log_step_values, trainer/loops/readback.py",
        (_LOG + "test_eval_loop_logging.py::test_eval_step_logging",),
    ),
    Item(
        "logging",
        "No warning when the epoch has fewer batches than `log_every_n_steps`",
        "e",
        "UserWarning 'The number of training batches (N) is smaller than the logging interval "
        "Trainer(log_every_n_steps=M)' when a logger is configured",
        "no warning",
        "trainer/loops/fit.py (start of fit) / trainer/options/checks.py",
        (_DL + "test_warning_with_small_dataloader_and_logging_interval",),
    ),
    Item(
        "logging",
        "`self.log(reduce_fx=...)` refuses Python's `max`/`min` and `'avg'`",
        "d",
        "`reduce_fx` accepts any callable reducing a tensor (Python's built-in `max`/`min` included) and the names "
        "'mean'/'avg'/'sum'/'max'/'min'",
        "refuses `max`, `min` (the built-ins) and `'avg'` with MisconfigurationException",
        "trainer/logging/collector.py:reduction_name",
        (
            _LOG + "test_train_loop_logging.py::test__training_step__log_max_reduce_fx",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_correct_value_epoch_end",
        ),
        messages=("self.log(reduce_fx=",),
    ),
    Item(
        "logging",
        "`self.log_dict(MetricCollection)` is refused",
        "d",
        "`log_dict` takes a torchmetrics `MetricCollection` (a Mapping of Metric objects, compute groups included)",
        "refuses it: 'log_dict() needs a mapping of names to values'",
        "trainer/logging/self_log.py:LogRouter.log_dict",
        (_LOG + "test_logger_connector.py::test_metriccollection_compute_groups",),
    ),
    Item(
        "logging",
        "`self.log(on_step=False, on_epoch=False)` is not refused",
        "e",
        "logging with both `on_step` and `on_epoch` False raises MisconfigurationException '... is not useful'",
        "accepts the call (the value goes nowhere)",
        "trainer/logging/self_log.py:log",
        (
            _LOG + "test_train_loop_logging.py::test_log_works_in_train_callback",
            _LOG + "test_eval_loop_logging.py::test_log_works_in_val_callback",
        ),
    ),
    Item(
        "logging",
        "`self.log` with a key ending in `/dataloader_idx_N` is not refused",
        "e",
        "`self.log('foo/dataloader_idx_0', ...)` raises MisconfigurationException (the suffix is reserved)",
        "accepts the key",
        "trainer/logging/self_log.py:log",
        (_LOG + "test_train_loop_logging.py::test_logging_raises",),
    ),
    Item(
        "logging",
        "`self.log` with an invalid value: message lacks Lightning's phrase",
        "g",
        "ValueError containing '`self.log(foo, <value>)` was called'",
        "ValueError (MisconfigurationException) 'self.log('foo', <value>): the value must be a number ...'",
        "trainer/logging/self_log.py:log (the value check)",
        (_LOG + "test_train_loop_logging.py::test_log_invalid_raises",),
    ),
    Item(
        "logging",
        "Callbacks do not get `log`/`log_dict`",
        "c",
        "at fit start every callback gets `log` and `log_dict` bound to the module's, so `self.log(...)` works in a "
        "callback hook",
        "AttributeError: 'LoggingCallback' object has no attribute 'log'",
        "trainer/setup.py:start_run (callbacks are not given log/log_dict)",
        (_LOG + "test_train_loop_logging.py::test_logging_in_callbacks_with_log_function",),
    ),
    Item(
        "logging",
        "`self.log` outside a registered trainer: other warning",
        "e",
        "warns '`self.trainer` reference is not registered' when a module logs without a Trainer",
        "warns 'self.log() was called outside trainer.fit/validate/test, so the value goes nowhere.'",
        "trainer/logging/self_log.py:log",
        (_LOG + "test_logger_connector.py::test_fx_validator_integration",),
    ),
    Item(
        "logging",
        "A value logged as `epoch` is dropped; no warning for `logger=True` without a logger",
        "e",
        "`self.log('epoch', v)` replaces the automatic `epoch` in `logged_metrics` and the logger row; with "
        "`logger=False` it warns '`self.log('epoch', ..., logger=True)` but have no logger configured'",
        "the user's `epoch` is overwritten and kept out of `logged_metrics` (which stays `{}`); no warning",
        "trainer/run.py:Run.log_metrics",
        (_LOG + "test_logger_connector.py::test_logged_metrics_has_logged_epoch_value",),
    ),
    Item(
        "hooks",
        "`setup`/`teardown` get `stage` as a plain str",
        "c",
        "the `stage` argument is a `TrainerFn` (a str enum: `stage == 'fit'` and `stage.value` both work), and "
        "`trainer.state.stage` is a `RunningStage`",
        "a plain str: `stage.value` raises AttributeError",
        "trainer/setup.py (hooks.call('setup', stage=...)), trainer/state.py",
        (_LOG + "test_logger_connector.py::test_metrics_reset",),
    ),
    # ------------------------------------------------------------------------------------------------ data
    Item(
        "data",
        "`reload_dataloaders_every_n_epochs` never reloads validation loaders",
        "e",
        "with `reload_dataloaders_every_n_epochs=n`, `val_dataloader()` is called again at every validation run that "
        "falls on a reload epoch (and train loaders are asked in Lightning's order relative to the sanity check)",
        "validation loaders are made once per fit; only the training loader is remade",
        "trainer/loops/evaluation.py:EvaluationLoop.loaders (cached `_loaders`), trainer/loops/fit.py:_start_epoch",
        (
            _DL + "test_dataloaders_load_every_n_epochs_infrequent_val",
            _DL + "test_dataloaders_load_every_n_epochs_frequent_val",
            _DL + "test_dataloaders_load_every_epoch_no_sanity_check",
            _DL + "test_dataloaders_load_every_n_epochs",
            _DL + "test_dataloaders_load_every_epoch",
        ),
    ),
    Item(
        "data",
        "One-shot iterables and loaders whose `__len__` raises are refused as evaluation loaders",
        "d",
        "a `val_dataloader()` returning an iterator/generator-like object, or a DataLoader whose `__len__` raises "
        "`NotImplementedError`/is infinite, is accepted (its length is unknown: limits must be ints)",
        "refused: '... got a <X> (a one-shot iterator or generator): it would be empty from the second epoch on'",
        "data/sources.py:check_loader",
        (
            _DL + "test_train_dataloader_not_implemented_error",
            _DL + "test_request_dataloader",
            _L + "test_training_loop.py::test_tqdm_total_steps_with_iterator_no_length",
            _L + "test_prediction_loop.py::test_prediction_loop_with_iterable_dataset",
        ),
    ),
    Item(
        "data",
        "A training epoch with no batches (`limit_train_batches=0`, an exhausted iterable) ends `fit` with an error",
        "d",
        "a training loader that yields no batch in an epoch (or `limit_train_batches=0`) is not an error: the fit "
        "skips training (and validates/checkpoints as configured) or ends the epoch",
        "raises MisconfigurationException 'a DataLoader yielded no batches in epoch N'",
        "trainer/loops/fit.py:FitLoop._end_epoch (raises via limits.explain_empty_epoch)",
        (
            _DL + "test_iterable_dataset_stop_iteration_at_epoch_beginning",
            _L + "test_fetchers.py::test_step_methods_with_dataloader_iter[0-0-0]",
            _L + "test_loops.py::test_fit_loop_save_and_restore_dataloaders[<lambda>-False-batches_before0-*",
            _P + "trainer/test_trainer.py::test_disabled_training",
        ),
    ),
    Item(
        "flags",
        "Invalid `limit_*_batches`/`val_check_interval`/`overfit_batches` values: message",
        "g",
        "MisconfigurationException '`<name>` was passed invalid value <v>, but ...' for a negative value or a float "
        "above 1.0",
        "MisconfigurationException 'limit_train_batches=-0.1 is invalid: expected a float in [0, 1] ...'",
        "trainer/options/entries.py:validate_options",
        (_DL + "test_dataloader_config_errors_init",),
    ),
    Item(
        "data",
        "`reload_dataloaders_every_n_epochs` < 0 or not an int: message",
        "g",
        "MisconfigurationException 'should be an int >= 0'",
        "MisconfigurationException in accelplug's words",
        "trainer/options/entries.py:validate_options",
        (_DL + "test_dataloaders_load_every_n_epochs_exception",),
    ),
    Item(
        "data",
        "`trainer.train_dataloader` under `overfit_batches` with several loaders is a list, not a CombinedLoader",
        "c",
        "`trainer.train_dataloader` is what `train_dataloader()` returned (each loader's sampler replaced by a "
        "SequentialSampler under `overfit_batches`)",
        "a plain list of loaders whose samplers are not replaced; `.sampler` missing on the list",
        "trainer/views.py:train_dataloader",
        (_DL + "test_multiple_dataloaders_with_random_sampler_overfit_batches",),
    ),
    Item(
        "data",
        "`fit` with several training loaders in `sequential` mode: message",
        "g",
        "ValueError '`FitLoop` does not support the `CombinedLoader(mode=\"sequential\")`'",
        "ValueError in other words",
        "data/combined_loader.py",
        (_DL + "test_fit_multiple_train_loaders",),
    ),
    # ------------------------------------------------------------------------------------------------ checkpoint
    Item(
        "checkpoint",
        "`ModelCheckpoint`'s annotations are strings",
        "e",
        "the signature's annotations are typing objects, so `ArgumentParser(type=annotation)` (jsonargparse) works",
        "`from __future__ import annotations` makes them strings: 'bool | str | None' is not callable",
        "callbacks/model_checkpoint.py (module header)",
        (_MC + "test_save_last_cli",),
    ),
    Item(
        "checkpoint",
        "Invalid ModelCheckpoint arguments: messages lack Lightning's phrases",
        "g",
        "MisconfigurationException with 'Must be >= -1' (save_top_k), 'Must be >= 0' (every_n_*), 'Combination of "
        "parameters every_n_train_steps', '`mode` can be ... but got unknown_option', a monitor=None top_k message; "
        "ValueError 'save_last='link'... is only supported for local file paths'; '`enable_checkpointing=False` but "
        "found `ModelCheckpoint`'",
        "the same exception types with accelplug's words",
        "callbacks/model_checkpoint.py:ModelCheckpoint.__init__; trainer/options/checks.py",
        (
            _MC + "test_invalid_top_k",
            _MC + "test_invalid_every_n_epochs",
            _MC + "test_invalid_every_n_train_steps",
            _MC + "test_invalid_trigger_combination",
            _MC + "test_model_checkpoint_mode_options",
            _MC + "test_none_monitor_top_k",
            _MC + "test_model_checkpoint_save_last_as_link_not_local",
            _MC + "test_configure_model_checkpoint",
        ),
    ),
    Item(
        "checkpoint",
        "A fitted Trainer cannot be pickled",
        "f",
        "`pickle.dumps(trainer)` / `torch.save(trainer)` works after `fit` (and a module attached to it can be saved)",
        "AttributeError: Can't pickle local object 'train_loader_source.<locals>.source'",
        "trainer/loops/fit_data.py:train_loader_source (a closure kept on the trainer)",
        (
            _P + "checkpointing/test_torch_saving.py::test_model_torch_save",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_can_be_pickled",
        ),
        messages=("Can't pickle local object 'train_loader_source",),
    ),
    Item(
        "checkpoint",
        "Checkpoint keeps the datamodule's state under another key",
        "e",
        "the datamodule's `state_dict()` is saved under the datamodule class's `__qualname__`",
        "saved under `datamodule`",
        "trainer/checkpointing/contents.py (checkpoint['datamodule'])",
        (_P + "core/test_datamodules.py::test_dm_checkpoint_save_and_load",),
    ),
    # ------------------------------------------------------------------------------------------------ hooks/module
    Item(
        "hooks",
        "`str(datamodule)` is the object's default repr",
        "e",
        "`str(LightningDataModule)` lists each stage's dataloader and its size ('{Train dataloader: size=64}...')",
        "`object.__repr__`",
        "datamodule.py:LightningDataModule (no __str__)",
        (_P + "core/test_datamodules.py::test_datamodule_string_*",),
    ),
    Item(
        "hooks",
        "`DataModule.save_hyperparameters(Namespace | dict)` crashes",
        "f",
        "`save_hyperparameters(argparse.Namespace)` or `save_hyperparameters(dict)` stores the items as hparams",
        "TypeError: unhashable type: 'Namespace' / 'dict' (test_hparams.py calls it at import, so the whole file "
        "of 70 hyper-parameter tests fails to import)",
        "datamodule.py:LightningDataModule.save_hyperparameters",
        (
            _P + "core/test_datamodules.py::test_hyperparameters_saving",
            _P + "loggers/test_logger.py::test_log_hyperparams_key_collision",
        ),
        messages=("datamodule.py:88",),
    ),
    Item(
        "hooks",
        "`trainer.datamodule` cannot be set",
        "e",
        "`trainer.datamodule = dm` is allowed (the property has a setter)",
        "AttributeError: property 'datamodule' of 'Trainer' object has no setter",
        "trainer/properties.py:datamodule",
        (
            _P + "core/test_datamodules.py::test_can_prepare_data",
            _P + "utilities/test_parsing.py::test_lightning_hasattr",
            _P + "utilities/test_parsing.py::test_lightning_getattr",
            _P + "utilities/test_parsing.py::test_lightning_setattr",
        ),
        messages=("property 'datamodule' of 'Trainer' object has no setter",),
    ),
    Item(
        "hooks",
        "`trainer.state.finished` missing",
        "c",
        "`trainer.state` is a TrainerState with `.finished`, `.status`, `.fn`, `.stage` (enums)",
        "`trainer.state` is accelplug's LoopState, without `finished`",
        "trainer/state.py:LoopState",
        (
            _P + "core/test_datamodules.py::test_full_loop",
            _P + "core/test_datamodules.py::test_train_loop_only",
            _P + "core/test_datamodules.py::test_train_val_loop_only",
            _P + "callbacks/test_early_stopping.py::test_early_stopping_no_val_step",
            _P + "models/test_hooks.py::test_on_train_epoch_end_metrics_collection",
            _P + "tuner/test_lr_finder.py::test_lr_finder_with_early_stopping",
            _P + "loggers/test_logger.py::test_custom_logger",
            _P + "loggers/test_logger.py::test_multiple_loggers",
        ),
        messages=("'LoopState' object has no attribute 'finished'",),
    ),
    Item(
        "hooks",
        "DataModule hooks are not profiled",
        "e",
        "the profiler records `[LightningDataModule]<Class>.state_dict` and the other datamodule hooks",
        "no datamodule entries in `profiler.recorded_durations`",
        "trainer/dispatch/profiling.py",
        (_P + "core/test_datamodules.py::test_datamodule_hooks_are_profiled",),
    ),
    Item(
        "hooks",
        "A LightningModule used under Fabric has no Trainer shim",
        "f",
        "under `fabric.setup(module)`, `module.trainer` is a `_TrainerFabricShim`, and `optimizers()`, "
        "`clip_gradients`, `log`/`log_dict` (to `fabric.log`, refusing list values with ValueError '`list` values "
        "cannot be logged'), `logger` (IndexError without loggers) go through Fabric",
        "the FabricModule has no `trainer`, and the module's `trainer` raises 'not attached to a Trainer'; "
        "`optimizers()`/`clip_gradients` raise 'work during trainer.fit() only'; `log` accepts lists; no IndexError",
        "module.py:LightningModule.trainer, LightningModule._control (optimizers, clip_gradients), log; "
        "fabric/wrappers.py",
        (
            _P + "core/test_lightning_module.py::test_fabric_attributes",
            _P + "core/test_lightning_module.py::test_grad_clipping_lm_fabric",
            _P + "core/test_lightning_module.py::test_fabric_log",
            _P + "core/test_lightning_module.py::test_fabric_log_dict",
            _P + "core/test_lightning_module.py::test_fabric_logger_access",
            _P + "models/test_fabric_integration.py::test_fabric_boring_lightning_module_manual",
        ),
    ),
    Item(
        "hooks",
        "`configure_gradient_clipping` gets 'norm' where Lightning passes None",
        "e",
        "`configure_gradient_clipping(optimizer, gradient_clip_val, gradient_clip_algorithm)` receives the "
        "Trainer's own values (`trainer.gradient_clip_algorithm` is None when not set); a module clipping with "
        "other values than the Trainer's raises MisconfigurationException",
        "passes 'norm' for an unset algorithm; no error for conflicting values",
        "trainer/loops/optimization.py (the configure_gradient_clipping call), "
        "trainer/views.py:gradient_clip_algorithm",
        (_P + "core/test_lightning_module.py::test_lightning_module_configure_gradient_clipping*",),
    ),
    Item(
        "optim",
        "Toggling 2-3 optimizers leaves the loss without grad",
        "d",
        "with several optimizers in automatic optimization (toggled per optimizer), each optimizer's loss is "
        "backpropagated",
        "MisconfigurationException 'training_step returned a loss that does not require grad'",
        "trainer/loops/optimization.py:Optimization.backward (the requires-grad check), "
        "module.py:LightningModule.toggle_optimizer",
        (
            _P + "core/test_lightning_module.py::test_toggle_untoggle_2_optimizers_no_shared_parameters",
            _P + "core/test_lightning_module.py::test_toggle_untoggle_3_optimizers_shared_parameters",
        ),
    ),
    Item(
        "hooks",
        "An unattached module's `trainer`: message",
        "g",
        "RuntimeError '... is not attached to a `Trainer`'",
        "RuntimeError 'BoringModel is not attached to a Trainer (call trainer.fit first).'",
        "module.py:LightningModule.trainer",
        (_P + "core/test_lightning_module.py::test_trainer_reference_recursively",),
    ),
    # ------------------------------------------------------------------------------------------------ loggers
    Item(
        "loggers",
        "`trainer.log_dir` and `trainer.default_root_dir` are Paths",
        "e",
        "`trainer.log_dir` is a str equal to `trainer.logger.log_dir`; `default_root_dir` a str ('~' expanded)",
        "a `pathlib.Path`; with a mocked logger, TypeError",
        "trainer/properties.py:TrainerProperties.log_dir",
        (
            _P + "loggers/test_tensorboard.py::test_tensorboard_hparams_reload",
            _P + "loggers/test_tensorboard.py::test_tensorboard_save_hparams_to_yaml_once",
            _LOG + "test_distributed_logging.py::test_first_logger_call_in_subprocess",
            _P + "trainer/test_trainer.py::test_expand_home_trainer",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ hooks (2)
    Item(
        "hooks",
        "A hook wrapped with `functools.update_wrapper`/`partial` counts as overridden",
        "e",
        "`is_overridden` unwraps `__wrapped__`, `partial.func` and `Mock(wraps=...)` before comparing with the base "
        "class, so a wrapped default `configure_sharded_model` is not an override (no 'Both configure_model and "
        "configure_sharded_model' error)",
        "a wrapped default hook counts as overridden: `_BothConfigureHooks` at fit/predict",
        "overrides.py:overrides (used by trainer/setup.py:_configure_sharded_model)",
        (
            _P + "models/test_hooks.py::test_trainer_model_hook_system_fit_no_val_and_resume_max_epochs",
            _P + "models/test_hooks.py::test_trainer_model_hook_system_fit_no_val_and_resume_max_steps",
            _P + "models/test_hooks.py::test_trainer_model_hook_system_predict",
        ),
    ),
    Item(
        "hooks",
        "Every submodule is put in train mode, frozen ones included",
        "e",
        "the loops keep each submodule's own `training` flag (a submodule put in eval mode stays in eval mode during "
        "fit) and restore every submodule's mode after evaluation",
        "`module.train()` on the whole module at each training epoch and after evaluation",
        "trainer/loops/fit.py:_start_epoch (`self.opt.module.train()`), trainer/loops/evaluation.py",
        (_P + "models/test_hooks.py::test_train_eval_mode_restored",),
    ),
    Item(
        "hooks",
        "DataModule hooks: `setup`/`teardown` get `stage` positionally; the order differs",
        "e",
        "the datamodule's hooks are called as `setup(stage='fit')`, `teardown(stage='fit')` (keyword), in "
        "Lightning's order (prepare_data, setup, val_dataloader, train_dataloader, state_dict, teardown ...)",
        "`setup('fit')` positionally (and another order/calls)",
        "trainer/setup.py (datamodule hook calls), trainer/dispatch/hooks.py",
        (_P + "models/test_hooks.py::test_trainer_datamodule_hook_system",),
    ),
    # ------------------------------------------------------------------------------------------------ flags
    Item(
        "flags",
        "`Strategy.connect(model)` missing",
        "c",
        "`trainer.strategy.connect(model)` attaches the module to the strategy (public Strategy API; tests call it "
        "before asking the data connector/limits)",
        "AttributeError: no attribute 'connect'",
        "strategies/base.py:Strategy",
        (
            _P + "trainer/flags/test_limit_batches.py::test_eval_limit_batches",
            _P + "trainer/flags/test_overfit_batches.py::test_overfit_batch_limits_eval",
            _P + "trainer/flags/test_overfit_batches.py::test_overfit_batch_limits_train",
            _P + "trainer/flags/test_overfit_batches.py::test_distributed_sampler_with_overfit_batches",
            _P + "trainer/optimization/test_optimizers.py::test_optimizer_return_options",
            _DL + "test_warning_on_zero_len_dataloader",
            _MC + "test_none_monitor_saves_correct_best_model_path",
            _MC + "test_save_last_saves_correct_last_model_path",
        ),
        messages=("object has no attribute 'connect'",),
    ),
    Item(
        "flags",
        "No info message for limits of one batch or the full epoch",
        "e",
        "`Trainer(limit_*_batches=1|1.0)`, `overfit_batches=1|1.0` and `val_check_interval=1|1.0` log INFO "
        "'`Trainer(<arg>=<value>)` was configured so ... will be used.'",
        "no message",
        "trainer/options/entries.py (option parsing) / trainer/trainer.py:Trainer.__init__",
        (
            _P + "trainer/flags/test_limit_batches.py::test_limit_batches_info_message",
            _P + "trainer/flags/test_val_check_interval.py::test_val_check_interval_info_message",
        ),
    ),
    Item(
        "flags",
        "`barebones=True` neither says so nor refuses conflicting options",
        "e",
        "logs INFO 'running in `Trainer(barebones=True)` mode', `self.log` warns '`Trainer(barebones=True)` is "
        "configured', and `enable_checkpointing=True`/`logger=True`/`enable_progress_bar=True`/"
        "`enable_model_summary=True`... with barebones raise ValueError '`Trainer(barebones=True)` ... was passed'",
        "silent; conflicting options accepted",
        "trainer/options/checks.py, trainer/logging/self_log.py:log",
        (_P + "trainer/flags/test_barebones.py",),
    ),
    Item(
        "flags",
        "`PL_TRAINER_*` environment defaults are ignored",
        "e",
        "`Trainer()` reads defaults from `PL_TRAINER_<ARG>` variables (explicit arguments win)",
        "ignored (accelplug reads `ACCELPLUG_*` only)",
        "trainer/options/arguments.py / trainer/options/defaults.py",
        (_P + "trainer/flags/test_env_vars.py::test_passing_env_variables_only",),
    ),
    Item(
        "flags",
        "`trainer.max_epochs` stays None when only `max_steps` is given",
        "e",
        "with `max_steps` set and `max_epochs` unset, `trainer.max_epochs` is -1 after construction/fit",
        "None",
        "trainer/views.py:max_epochs, trainer/loops/limits.py",
        (_P + "trainer/flags/test_env_vars.py::test_passing_no_env_variables",),
    ),
    Item(
        "flags",
        "`fast_dev_run` leaves the module without a logger",
        "c",
        "under `fast_dev_run` the logger is replaced by a DummyLogger (`self.logger.experiment.anything(...)` works)",
        "`self.logger` is None",
        "trainer/options (fast_dev_run handling of loggers) / trainer/properties.py:logger",
        (_P + "trainer/flags/test_fast_dev_run.py::test_callbacks_and_logger_not_called_with_fastdevrun",),
    ),
    Item(
        "flags",
        "`trainer.fast_dev_run` is the int 1 for `fast_dev_run=True`; negative values: message",
        "e",
        "`trainer.fast_dev_run` keeps the value given (`True` stays `True`); `fast_dev_run=-1` raises "
        "MisconfigurationException '... should be >= 0'",
        "`True` becomes 1; another message for -1",
        "trainer/views.py:fast_dev_run; trainer/options/entries.py",
        (_DL + "test_dataloaders_with_fast_dev_run",),
    ),
    Item(
        "flags",
        "Evaluation hooks run with grad enabled",
        "e",
        "`validate`/`test`/`predict` run the whole stage (hooks included, e.g. `on_test_start`) under "
        "`torch.inference_mode()`/`no_grad()` (`inference_mode=True` by default)",
        "grad is enabled in the stage's start hooks; only the steps run under the grad context",
        "trainer/loops/evaluation.py:evaluate, trainer/loops/prediction.py (grad context entered per step)",
        (_P + "trainer/flags/test_inference_mode.py::test_eval_inference_mode",),
    ),
    Item(
        "flags",
        "`trainer.progress_bar_callback` is None with the default bar",
        "c",
        "with the default `enable_progress_bar=True`, `trainer.progress_bar_callback` is the TQDMProgressBar "
        "(`total_val_batches`, `get_metrics`, ... available)",
        "None: accelplug's own display is not a callback",
        "trainer/properties.py:progress_bar_callback, trainer/display/defaults.py",
        (
            _P + "trainer/flags/test_check_val_every_n_epoch.py::test_check_val_every_n_epoch",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_get_progress_bar_metrics_fast_dev_run",
            _L + "test_training_loop.py::test_progress_bar_steps",
        ),
        messages=(
            "'NoneType' object has no attribute 'total_val_batches'",
            "'NoneType' object has no attribute 'get_metrics'",
            "'NoneType' object has no attribute 'train_progress_bar'",
        ),
    ),
    Item(
        "flags",
        "`limit_*_batches` above the loader's length as a huge float is refused",
        "d",
        "`limit_test_batches=1e50` (a float > 1) is accepted and means 'all batches' (an int-valued float)",
        "refused: 'expected a float in [0, 1] or an int >= 0'",
        "trainer/options/entries.py:validate_options",
        (_DL + "test_dataloaders_with_limit_num_batches[1-2-1e+50]",),
    ),
    # ------------------------------------------------------------------------------------------------ limits
    Item(
        "limits",
        "Time-based `val_check_interval` is refused",
        "d",
        "`val_check_interval` also takes a duration: 'DD:HH:MM:SS', a `datetime.timedelta` or a dict of timedelta "
        "kwargs (validation every N seconds, optionally gated by `check_val_every_n_epoch`)",
        "refused: 'expected a float in (0, 1], an int >= 1, or None'",
        "trainer/options/entries.py:validate_options, trainer/loops/limits.py",
        (
            _P + "trainer/flags/test_val_check_interval.py::test_time_based_val_check_interval",
            _P + "trainer/flags/test_val_check_interval.py::test_time_and_epoch_gated_val_check",
        ),
    ),
    Item(
        "limits",
        "`val_check_interval` larger than the epoch: validation at other batches; not refused",
        "e",
        "with `check_val_every_n_epoch=None`, an int `val_check_interval` counts batches across epochs (validation "
        "at global batches 3, 6, 9, 12); with `check_val_every_n_epoch` set, an interval above the number of "
        "training batches raises ValueError '... must be less than or equal to the number of the training batches'",
        "the count restarts each epoch (validation at 3, 7, 11); no error",
        "trainer/loops/limits.py (val check schedule)",
        (
            _P + "trainer/flags/test_val_check_interval.py::test_validation_check_interval_exceed_data_length_*",
            _DL + "test_dataloader_config_errors_runtime",
        ),
    ),
    Item(
        "limits",
        "A float `val_check_interval` with `check_val_every_n_epoch=None` is not refused",
        "e",
        "raises MisconfigurationException '`val_check_interval` should be an integer or a time-based duration ... "
        "when `check_val_every_n_epoch=None`'",
        "accepted",
        "trainer/options/checks.py",
        (_P + "trainer/flags/test_val_check_interval.py::test_val_check_interval_float_with_none*",),
    ),
    Item(
        "limits",
        "`overfit_batches` with a shuffling train loader: no warning",
        "e",
        "warns 'You requested to overfit but enabled train dataloader shuffling' (and replaces the sampler)",
        "no warning",
        "data/loaders.py (overfit handling)",
        (_P + "trainer/flags/test_overfit_batches.py::test_overfit_batches_raises_warning*",),
    ),
    # ------------------------------------------------------------------------------------------------ callbacks
    Item(
        "callbacks",
        "Resuming past `max_epochs` does not raise",
        "e",
        "`fit(ckpt_path=...)` from a checkpoint whose epoch is already beyond `max_epochs` raises "
        "MisconfigurationException 'You restored a checkpoint with current_epoch=...'",
        "fit returns without error",
        "trainer/checkpointing/contents.py (restore) / trainer/stages.py:_fit",
        (_P + "callbacks/test_early_stopping.py::test_resume_early_stopping_from_checkpoint",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.callbacks.model_checkpoint` module path missing",
        "b",
        "the callback modules are importable paths (`callbacks.model_checkpoint`, `callbacks.early_stopping`, "
        "`callbacks.lr_monitor`, ...); tests patch names in them",
        "accelplug.pytorch.callbacks re-exports the classes without those module paths",
        "pytorch/callbacks/__init__.py",
        (_MC + "test_model_checkpoint_train_time_interval",),
    ),
    Item(
        "callbacks",
        "EarlyStopping/ModelCheckpoint `mode` error: message",
        "g",
        "MisconfigurationException '`mode` can be min, max but got unknown_option'",
        "MisconfigurationException \"EarlyStopping(mode='unknown_option') is invalid: use 'min' or 'max'.\"",
        "callbacks/early_stopping.py:EarlyStopping.__init__",
        (_P + "callbacks/test_early_stopping.py::test_early_stopping_mode_options",),
    ),
    Item(
        "callbacks",
        "`EarlyStopping.stopping_reason` state cannot be loaded from another value",
        "f",
        "`load_state_dict` restores `stopping_reason` from the saved value (an EarlyStoppingReason's value)",
        "ValueError: ... is not a valid EarlyStoppingReason (with the test's placeholder reason)",
        "callbacks/early_stopping.py:EarlyStopping.load_state_dict",
        (_P + "callbacks/test_early_stopping.py::test_early_stopping_reasons[None-early_stopping_kwargs5-*",),
    ),
    Item(
        "callbacks",
        "LearningRateMonitor: warning and error messages",
        "g",
        "RuntimeWarning '... optimizers do not have momentum.'; MisconfigurationException 'Cannot use "
        "`LearningRateMonitor` callback with `Trainer` that has no logger.'; MisconfigurationException 'A single "
        "`Optimizer` cannot have multiple parameter groups with identical `name` values.'",
        "the same types in accelplug's words",
        "callbacks/monitors.py:LearningRateMonitor",
        (
            _P + "callbacks/test_lr_monitor.py::test_log_momentum_no_momentum_optimizer",
            _P + "callbacks/test_lr_monitor.py::test_log_momentum_no_momentum_optimizer_no_lr_scheduler",
            _P + "callbacks/test_lr_monitor.py::test_lr_monitor_no_logger",
            _P + "callbacks/test_lr_monitor.py::test_lr_monitor_duplicate_custom_pg_names",
        ),
    ),
    Item(
        "callbacks",
        "LearningRateMonitor(logging_interval='step') with several optimizers logs at another cadence",
        "e",
        "logs once per `log_every_n_steps` batches that stepped (`global_step` counts every optimizer's step, so "
        "2 optimizers log `global_step // 2 // log_every_n_steps` values)",
        "logs another number of values per learning rate",
        "callbacks/monitors.py:LearningRateMonitor.on_train_batch_start",
        (
            _P + "callbacks/test_lr_monitor.py::test_lr_monitor_multi_lrs[step]",
            _P + "callbacks/test_lr_monitor.py::test_lr_monitor_no_lr_scheduler_multi_lrs[step]",
        ),
    ),
    Item(
        "callbacks",
        "LearningRateMonitor names: order with optimizers added by BaseFinetuning",
        "e",
        "`lr_monitor.lrs` keys in Lightning's order ('lr-Adam', 'lr-AdamW', 'lr-SGD/pg1', 'lr-SGD/pg2': optimizers "
        "with a scheduler first) and the param-group suffixes appear when a group is added",
        "another order ('lr-SGD' first, the old key kept)",
        "callbacks/monitors.py:LearningRateMonitor (names)",
        (_P + "callbacks/test_lr_monitor.py::test_multiple_optimizers_basefinetuning",),
    ),
    Item(
        "callbacks",
        "Two progress bars: message",
        "g",
        "MisconfigurationException starting 'You added multiple progress bar callbacks to the Trainer'",
        "MisconfigurationException 'callbacks holds 2 progress bars (...): keep one.'",
        "trainer/options/checks.py (callbacks check)",
        (_P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_misconfiguration",),
    ),
    Item(
        "callbacks",
        "`self.print` from steps does not go through the progress bar's `tqdm.write`",
        "e",
        "`LightningModule.print` while a TQDMProgressBar is active writes with `Tqdm.write` (so the bar is not "
        "broken), passing `end`/`file`/`sep` on",
        "`print` goes to stdout directly",
        "module.py:LightningModule.print, callbacks/progress.py",
        (
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_print",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_print_no_train",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ strategies
    Item(
        "strategies",
        "`strategy='ddp_spawn'`/`'ddp'` on CPU is refused where the interpreter was not started from a script (pytest)",
        "d",
        "`Trainer(strategy='ddp_spawn', accelerator='cpu', devices=2).fit(model)` spawns processes with "
        "multiprocessing from any interpreter (pytest, a notebook with fork...) and returns the results to the "
        "main process",
        "MisconfigurationException: 'strategy='ddp_spawn' with 2 devices runs one process per device, and this "
        "interpreter was not started from a script file that could be re-launched'",
        "launcher.py:relaunch_if_needed (via trainer/trainer.py:Trainer._here_or_forked)",
        (
            "tests_pytorch/*::*ddp_spawn*",
            _LOG + "test_train_loop_logging.py::test_logging_sync_dist_true[2-cpu]",
            _LOG + "test_distributed_logging.py::test_all_rank_logging_ddp_cpu",
            _P + "loggers/test_all.py::test_logger_initialization",
            _MC + "test_model_checkpoint_no_extraneous_invocations",
            _P + "checkpointing/test_torch_saving.py::test_model_torch_save_ddp_cpu",
            _L + "test_prediction_loop.py::test_prediction_loop_batch_sampler_set_epoch_called",
        ),
        messages=("interpreter was not started from a script file",),
    ),
    # ------------------------------------------------------------------------------------------------ paths
    Item(
        "paths",
        "`lightning.pytorch.callbacks.early_stopping` has no `EarlyStoppingReason` (and the module path is missing)",
        "b",
        "`from lightning.pytorch.callbacks.early_stopping import EarlyStoppingReason`; `EarlyStopping.stopping_reason` "
        "is an EarlyStoppingReason member and `stopping_reason_message` its text; the module path holds `log`",
        "no such module path under accelplug.pytorch.callbacks; accelplug's EarlyStoppingReason is not exported there",
        "pytorch/callbacks/__init__.py (no early_stopping module), callbacks/early_stopping.py",
        (
            _P + "callbacks/test_early_stopping.py::test_early_stopping_reasons",
            _P + "callbacks/test_early_stopping.py::test_early_stopping_log_info",
        ),
    ),
    Item(
        "paths",
        "`lightning.pytorch.callbacks.progress` (tqdm_progress.Tqdm, rich_progress) missing",
        "b",
        "`lightning.pytorch.callbacks.progress.tqdm_progress.Tqdm` (with `format_num`) and the module paths the "
        "tests patch (`...tqdm_progress.Tqdm`)",
        "no `callbacks.progress` package under accelplug.pytorch",
        "pytorch/callbacks/__init__.py",
        (
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_format_num",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_progress_bar_max_val_check_interval",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_test_progress_bar_update_amount",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_train_progress_bar_update_amount",
            _P + "callbacks/progress/test_tqdm_progress_bar.py::test_tqdm_progress_bar_print_disabled",
        ),
        messages=(
            "module 'accelplug.pytorch.callbacks' has no attribute 'progress'",
            "No module named 'lightning.pytorch.callbacks.progress'",
        ),
    ),
    Item(
        "paths",
        "`lightning.pytorch.utilities.model_helpers.is_overridden` missing",
        "b",
        "`is_overridden(name, model)` tells whether a module overrides a hook",
        "no `utilities.model_helpers` module (accelplug has `accelplug.overrides.overrides`)",
        "pytorch/utilities/__init__.py",
        (
            _P + "models/test_hooks.py::test_trainer_model_hook_system_fit",
            _P + "models/test_hooks.py::test_trainer_model_hook_system_eval",
            _P + "models/test_hooks.py::test_load_from_checkpoint_hook_calls",
        ),
    ),
    Item(
        "paths",
        "`lightning.pytorch.trainer.states` (TrainerFn, RunningStage, TrainerStatus) missing",
        "b",
        "`from lightning.pytorch.trainer.states import RunningStage, TrainerFn`; a stage's `dataloader_prefix`; "
        "`test_cli.py` reads `TrainerFn` values at import, so the whole CLI file waits for this module",
        "no `trainer.states` module",
        "pytorch/trainer/__init__.py",
        (
            _P + "trainer/flags/test_overfit_batches.py::test_overfit_batch_limits_eval",
            _DL + "test_inf_dataloader_raise_error_with_partial_batch_limits",
        ),
        messages=("lightning.pytorch.trainer.states",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.utilities.data.has_len_all_ranks` missing",
        "b",
        "`has_len_all_ranks(dataloader, strategy)`",
        "no `utilities.data` module",
        "pytorch/utilities/__init__.py",
        (_DL + "test_inf_dataloaders_with_limit_percent_batches", _DL + "test_warning_with_iterable_dataset_and_len"),
    ),
    Item(
        "paths",
        "`lightning.pytorch.core.saving` (load_hparams_from_yaml, save_hparams_to_yaml, ...) missing",
        "b",
        "`from lightning.pytorch.core.saving import load_hparams_from_yaml`",
        "no `core.saving` module",
        "pytorch/core/__init__.py",
        (_P + "loggers/test_csv.py::test_log_hyperparams",),
        messages=("lightning.pytorch.core.saving",),
    ),
    Item(
        "paths",
        "`lightning.fabric.utilities.warnings.PossibleUserWarning` missing",
        "b",
        "`PossibleUserWarning` (a UserWarning subclass) is what Lightning's 'possible mistake' warnings use",
        "no `fabric.utilities.warnings` module; the test's `pytest.warns(PossibleUserWarning)` cannot run",
        "fabric/utilities/__init__.py",
        (
            _P + "trainer/flags/test_min_max_epochs.py::test_max_epochs_not_set_warning",
            _L + "test_training_epoch_loop.py::test_resume_mid_epoch_warning",
            _L + "test_training_loop.py::test_eval_mode_warning",
        ),
        messages=("not <class 'ltshim._PlaceholderMeta'>",),
    ),
    Item(
        "paths",
        "`lightning.fabric.accelerators.{cpu,cuda,mps,xla}` and `lightning.pytorch.accelerators.{cpu,cuda}` "
        "submodules missing",
        "b",
        "the accelerator modules are importable paths, reached as attributes (`lightning.fabric.accelerators.cuda."
        "num_cuda_devices`, which the conftest's `cuda_count_N` fixtures patch; `...mps.MPSAccelerator."
        "is_available`)",
        "`accelplug.fabric.accelerators` is a module, not a package, and not an attribute of `accelplug.fabric` "
        "until imported; `accelplug.pytorch.accelerators` likewise",
        "fabric/accelerators.py",
        (
            _F + "test_backward_required",
            _P + "trainer/flags/test_env_vars.py::test_passing_env_variables_devices",
            _P + "plugins/test_amp_plugins.py::test_amp_ddp",
            _P + "plugins/test_cluster_integration.py::test_ranks_available_*",
        ),
        messages=(
            "module 'accelplug.fabric' has no attribute 'accelerators'",
            "module 'accelplug.fabric.accelerators' has no attribute",
            "module 'accelplug.pytorch.accelerators' has no attribute",
        ),
    ),
    Item(
        "paths",
        "`lightning.fabric.strategies.ddp` module path missing",
        "b",
        "`lightning.fabric.strategies.ddp.DistributedDataParallel` is patchable (the module exists)",
        "no `fabric.strategies.ddp` module",
        "fabric/strategies/__init__.py",
        (_F + "test_setup_module",),
    ),
    # ------------------------------------------------------------------------------------------------ optim
    Item(
        "optim",
        "`manual_backward(loss, *args, **kwargs)` drops its extra arguments",
        "f",
        "`self.manual_backward(loss, retain_graph=True)` passes `retain_graph` (and any other argument) to "
        "`loss.backward`",
        "the arguments are dropped: the second backward through the graph fails ('Trying to backward through the "
        "graph a second time')",
        "module.py:LightningModule.manual_backward (calls `_control().manual_backward(loss)` only); "
        "strategies/base.py:Strategy.backward, precision/base.py:Precision.backward",
        (
            _P + "trainer/optimization/test_manual_optimization.py::test_multiple_optimizers_manual_call_counts",
            _P + "trainer/optimization/test_manual_optimization.py::test_multiple_optimizers_manual_log",
            _P + "trainer/optimization/test_manual_optimization.py::test_step_with_optimizer_closure_2",
        ),
    ),
    Item(
        "optim",
        "Automatic optimization with an optimizer that needs a closure (LBFGS) calls `step()` without one",
        "f",
        "in automatic optimization `optimizer.step(closure=...)` is always given the closure that runs "
        "training_step + backward (LBFGS calls it several times; no extra backward outside it)",
        "the fast path calls `step()` without a closure: TypeError 'LBFGS.step() missing 1 required positional "
        "argument: closure'",
        "trainer/loops/fit.py:FitLoop.fast_batch, precision/base.py:Precision.step",
        (
            _P + "trainer/optimization/test_backward_calls.py::test_backward_count_with_closure",
            _L + "optimization/test_closure.py::test_closure_with_no_grad_optimizer",
        ),
    ),
    Item(
        "optim",
        "Manual optimization: `opt.step(closure=...)` reaches the optimizer positionally",
        "e",
        "`LightningOptimizer.step(closure=c, **kwargs)` calls `optimizer.step(closure=c, **kwargs)` (keywords kept)",
        "calls `optimizer.step(c)` positionally (a mocked `step` sees `call(<closure>)`)",
        "precision/base.py:Precision.step, trainer/loops/managed_optimizer.py",
        (_P + "trainer/optimization/test_manual_optimization.py::test_step_with_optimizer_closure_with_*",),
    ),
    Item(
        "optim",
        "Manual optimization: scheduler configs are validated as in automatic optimization",
        "d",
        "under manual optimization a ReduceLROnPlateau without `monitor` is accepted, a scheduler without `step` "
        "is accepted if the user steps it, extra keys warn RuntimeWarning '... but the keys will be ignored', and "
        "the Trainer never calls `lr_scheduler.step()` itself",
        "refuses the ReduceLROnPlateau without a monitor and the non-PyTorch scheduler; no warning about ignored keys",
        "optimizers.py:_scheduler, _scheduler_config (shared by both optimization modes); "
        "trainer/loops/optimization.py:Optimization.forward",
        (
            _P + "trainer/optimization/test_manual_optimization.py::test_lr_schedulers_reduce_lr_on_plateau",
            _P + "trainer/optimization/test_manual_optimization.py::test_manual_optimization_with_non_pytorch_*",
        ),
    ),
    Item(
        "optim",
        "`training_step(..., optimizer_idx)` (Lightning 1.x) is not refused with Lightning's message",
        "d",
        "RuntimeError 'Remove the `optimizer_idx` argument from `training_step`' when automatic optimization "
        "meets a 1.x training_step; several optimizers in automatic optimization are refused",
        "the step is called without the argument: TypeError 'missing 1 required positional argument: optimizer_idx'",
        "trainer/setup.py / module_steps.py (step signature checks)",
        (_P + "trainer/optimization/test_multiple_optimizers.py::test_multiple_optimizers_automatic_*",),
    ),
    Item(
        "optim",
        "`configure_optimizers` errors: messages lack Lightning's phrases",
        "g",
        "MisconfigurationException with 'Unknown configuration for model optimizers', 'The lr scheduler dict must "
        "have the key \"scheduler\"', 'The \"interval\" key in lr scheduler dict must be', 'must include a monitor "
        "when a `ReduceLROnPlateau` scheduler is used', the `strict` monitor message",
        "MisconfigurationException in accelplug's words",
        "optimizers.py",
        (
            _P + "trainer/optimization/test_optimizers.py::test_unknown_configure_optimizers_raises",
            _P + "trainer/optimization/test_optimizers.py::test_lr_scheduler_with_no_actual_scheduler_raises",
            _P + "trainer/optimization/test_optimizers.py::test_lr_scheduler_with_unknown_interval_raises",
            _P + "trainer/optimization/test_optimizers.py::test_reducelronplateau_with_no_monitor_*",
            _P + "trainer/optimization/test_optimizers.py::test_lr_scheduler_strict",
        ),
    ),
    Item(
        "optim",
        "A step-interval ReduceLROnPlateau's state in a checkpoint saved at train epoch end is one step behind",
        "e",
        "when ModelCheckpoint saves at validation end (save_on_train_epoch_end=False), the plateau scheduler "
        "(interval 'step') has stepped for the epoch's last batch before the checkpoint is made",
        "the saved `last_epoch` is one higher/lower than Lightning's",
        "trainer/checkpointing/contents.py (scheduler states) / trainer/loops/fit.py (scheduler stepping order)",
        (_P + "trainer/optimization/test_optimizers.py::test_plateau_scheduler_lr_step_interval_updated_after_saving",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.utilities.types.LRSchedulerConfig` missing",
        "b",
        "`trainer.lr_scheduler_configs` holds `LRSchedulerConfig` dataclasses (scheduler, name, interval, "
        "frequency, reduce_on_plateau, monitor, strict) importable from `utilities.types`",
        "no `LRSchedulerConfig` in accelplug.pytorch.utilities.types",
        "pytorch/utilities/types.py",
        (_P + "trainer/optimization/test_optimizers.py::test_reducelronplateau_scheduling",),
    ),
    # ------------------------------------------------------------------------------------------------ fabric
    Item(
        "fabric",
        "`Fabric.load`/`load_raw` do not delegate to `strategy.load_checkpoint`",
        "d",
        "`fabric.load(path, state, strict, weights_only)` and `load_raw` call `fabric.strategy.load_checkpoint(path=, "
        "state=, strict=, weights_only=)`, which reads the file (a strategy may read a folder: sharded checkpoints)",
        "accelplug checks the path itself first ('no such file' / 'is a folder; accelplug checkpoints are one "
        "file'), so a strategy's own loader (or a mocked one) is never reached",
        "fabric/checkpoints.py:_read (the path check), fabric/fabric.py:Fabric.load, Fabric.load_raw",
        (
            _F + "test_fabric_load_forwards_weights_only_to_strategy",
            _F + "test_fabric_load_raw_forwards_weights_only_to_strategy",
            _F + "test_load_raw",
            _F + "test_load_wrapped_objects[False]",
        ),
    ),
    Item(
        "fabric",
        "`Fabric.save` does not delegate to `strategy.save_checkpoint`; `strategy.checkpoint_io` refuses duck types",
        "d",
        "`fabric.save(path, state)` unwraps the objects and calls `fabric.strategy.save_checkpoint(state=, path=, "
        "filter=)`; `strategy.checkpoint_io` may be set to any object with CheckpointIO's methods",
        "saves without calling the strategy's method; setting `checkpoint_io` to a non-CheckpointIO is refused",
        "fabric/checkpoints.py, fabric/fabric.py:Fabric.save; strategies/base.py:Strategy.checkpoint_io (setter)",
        (_F + "test_save_wrapped_objects[False]", _F + "test_save_filter"),
    ),
    Item(
        "fabric",
        "`Strategy.module_init_context` / `tensor_init_context` missing",
        "c",
        "`fabric.init_module()` / `init_tensor()` enter `strategy.module_init_context(empty_init)` / "
        "`strategy.tensor_init_context()` (public Strategy API)",
        "AttributeError on the strategy",
        "strategies/base.py:Strategy; fabric/init.py",
        (_F + "test_init_module_context", _F + "test_init_tensor_context"),
    ),
    Item(
        "fabric",
        "`Fabric.clip_gradients` does not go through `strategy.clip_gradients_norm/value`",
        "e",
        "`fabric.clip_gradients(model, optimizer, max_norm=...|clip_val=...)` calls `strategy.clip_gradients_norm("
        "module, optimizer, max_norm=, norm_type=, error_if_nonfinite=)` or `strategy.clip_gradients_value(module, "
        "optimizer, clip_val=)`",
        "clips without those strategy methods",
        "fabric/fabric.py:Fabric.clip_gradients",
        (_F + "test_grad_clipping",),
    ),
    Item(
        "fabric",
        "`Fabric.launch` misuse is not refused as Lightning refuses it",
        "e",
        "`launch()` under the `lightning run` CLI (LT_CLI_USED=1) raises RuntimeError 'Calling `.launch()` again is "
        "not allowed'; a Fabric subclass overriding `run()` under the CLI raises TypeError; `launch(fn)` with a "
        "function of no argument raises TypeError '... needs to take at least one argument'",
        "launches; no TypeError (a MisconfigurationException, not a TypeError, for the no-argument function)",
        "fabric/fabric.py:Fabric.launch, Fabric.__init__",
        (
            _F + "test_launch_and_cli_not_allowed",
            _F + "test_overridden_run_and_cli_not_allowed",
            _F + "test_launch_with_function",
        ),
    ),
    Item(
        "fabric",
        "`Fabric.call` skipping a non-callable callback attribute: warning text",
        "e",
        "UserWarning 'Skipping the callback `Mock.not_a_method` because it is not callable.'",
        "UserWarning 'skipping Mock.not_a_method: it is not callable.'",
        "fabric/fabric.py:Fabric.call",
        (_F + "test_call",),
    ),
    Item(
        "fabric",
        "`Fabric.seed_everything` + `setup_dataloaders` does not set the worker init function",
        "c",
        "after `Fabric.seed_everything(3)`, a loader from `setup_dataloaders` has `worker_init_fn = "
        "partial(pl_worker_init_function, rank=...)`; PL_GLOBAL_SEED and PL_SEED_WORKERS are set",
        "`worker_init_fn` is None",
        "fabric/preparation.py (setup_dataloaders), seed.py",
        (_F + "test_seed_everything",),
    ),
    Item(
        "fabric",
        "`strategy='dp'` unknown to Fabric",
        "d",
        "Fabric accepts `strategy='dp'` (DataParallelStrategy) and replaces samplers as for single-process runs",
        "'dp' is not a registered strategy",
        "registry.py:AcceleratorRegistry.get_strategy (no 'dp'), selection.py",
        (_F + "test_setup_dataloaders_replace_custom_sampler[dp]", _F + "test_setup_dataloaders_replace_standard_*"),
    ),
    Item(
        "fabric",
        "`setup_dataloaders` with a custom sampler of unknown length is refused",
        "d",
        "with a distributed strategy and `use_distributed_sampler=True`, a custom sampler is wrapped in "
        "`DistributedSamplerWrapper` (no length needed up front)",
        "MisconfigurationException 'a Mock has no length, so its indices cannot be shared out over processes'",
        "data/samplers.py:DistributedSamplerWrapper.__init__ (needs len); strategies/ddp.py",
        (_F + "test_setup_dataloaders_replace_custom_sampler",),
    ),
    Item(
        "fabric",
        "Fabric's misuse errors: messages (and one type) differ",
        "g",
        "ValueError 'A model should be passed only once to the `setup_module` method' / 'An optimizer should be "
        "passed only once ...' / 'A dataloader should be passed only once ...' / '`setup_dataloaders` requires at "
        "least one dataloader'; ValueError '... it cannot be converted to a scalar.' from `log`; TypeError 'You need "
        "to set up the model first' from `no_backward_sync` on a module not set up",
        "ValueError (MisconfigurationException) in accelplug's words; MisconfigurationException, not TypeError, "
        "from `no_backward_sync`",
        "fabric/fabric.py:Fabric.setup*, no_backward_sync, log; fabric/preparation.py",
        (
            _F + "test_setup_twice_fails",
            _F + "test_setup_module_twice_fails",
            _F + "test_setup_optimizers_twice_fails",
            _F + "test_setup_dataloaders_twice_fails",
            _F + "test_setup_dataloaders_unsupported_input",
            _F + "test_log_dict_input_parsing",
            _F + "test_no_backward_sync",
        ),
    ),
    Item(
        "paths",
        "`lightning.fabric.utilities.exceptions.MisconfigurationException` missing",
        "b",
        "`from lightning.fabric.utilities.exceptions import MisconfigurationException`",
        "no `fabric.utilities.exceptions` module (tests then cannot name the exception they expect)",
        "fabric/utilities/__init__.py",
        (_F + "test_setup_dataloaders_raises_for_unknown_custom_args",),
    ),
    Item(
        "paths",
        "`lightning.fabric.strategies.DeepSpeedStrategy` / `XLAStrategy` missing",
        "b",
        "the names exist in `lightning.fabric.strategies` (and in `lightning.pytorch.strategies`) even without "
        "the backends installed",
        "missing (accelplug's DeepSpeed/XLA live in out-of-tree plugins)",
        "fabric/strategies/__init__.py, pytorch/strategies.py",
        (_F + "test_setup_optimizers_not_supported",),
    ),
    # ------------------------------------------------------------------------------------------------ private
    Item(
        "private",
        "Fabric tests that replace or read Fabric's private parts",
        "a",
        "the tests set `fabric._strategy = Mock(...)`, `fabric._launched = True` (to pretend a launched rank), or "
        "check `isinstance(obj, _FabricModule/_FabricOptimizer/_FabricDataLoader)`",
        "accelplug's Fabric has other private parts; its wrappers are `FabricModule`, `FabricOptimizer`, "
        "`FabricDataLoader`",
        "fabric/fabric.py, fabric/wrappers.py",
        (
            _F + "test_setup_dataloaders_distributed_sampler_parity",
            _F + "test_setup_dataloaders_distributed_sampler_shuffle",
            _F + "test_rank_properties",
            _F + "test_setup_module_and_optimizers",
            _F + "test_setup_optimizers",
            _F + "test_setup_dataloaders_return_type",
            _F + "test_save_wrapped_objects[True]",
            _F + "test_load_wrapped_objects[True]",
            _F + "test_all_gather",
            _F + "test_all_reduce",
            _F + "test_broadcast",
            _F + "test_barrier",
            _F + "test_backward",
            _F + "test_launch_without_function",
            _F + "test_module_sharding_context",
            _F + "test_setup_tracks_num_models",
            _F + "test_verify_launch_called",
            _F + "test_setup_compiled_module",
            _F + "test_rank_zero_first",
            _F + "test_setup_dataloaders_captures_dataloader_arguments",
            _F + "test_launch_and_strategies_unsupported_combinations",
        ),
    ),
    Item(
        "private",
        "Trainer tests that patch Lightning's module globals or private attributes",
        "a",
        "the tests patch `lightning.pytorch.loops.fit_loop._request_dataloader`, "
        "`lightning.pytorch.core.datamodule.DataLoader`, the conftest's `xla_available` (`_XLA_AVAILABLE` flags), "
        "or drive `self.log` by setting `model._current_fx_name`",
        "accelplug's code lives in other modules; the patched names do not exist there",
        "-",
        (
            _DL + "test_dataloaders_load_only_once_passed_loaders",
            _P + "core/test_datamodules.py::test_dm_init_from_datasets_dataloaders",
            _P + "checkpointing/test_trainer_checkpoint.py::test_trainer_save_checkpoint_storage_options",
            _P + "plugins/precision/test_xla.py",
            _P + "strategies/test_registry.py::test_xla_debug_strategy_registry",
            _P + "strategies/test_xla.py",
            _P + "strategies/test_common.py::test_rank_properties_access",
            _LOG + "test_train_loop_logging.py::test_unsqueezed_tensor_logging",
        ),
    ),
    Item(
        "checkpoint",
        "Resuming with another ModelCheckpoint dirpath: warning text",
        "g",
        "UserWarning 'The dirpath has changed from <old> to <new>, therefore `best_model_score`, ... will not be "
        "reloaded'",
        'UserWarning "ModelCheckpoint\'s dirpath changed from <old> to <new>: only ..."',
        "callbacks/model_checkpoint.py:ModelCheckpoint.load_state_dict",
        (_MC + "test_model_checkpoint_saveload_ckpt",),
    ),
    Item(
        "loggers",
        "`TensorBoardLogger.log_graph` needs the module to be attached to a Trainer",
        "f",
        "`logger.log_graph(model, input_array)` works on a module not attached to a Trainer",
        "RuntimeError 'BoringModel is not attached to a Trainer' (it reads `model.trainer`)",
        "loggers/tensorboard.py:TensorBoardLogger.log_graph",
        (_P + "loggers/test_tensorboard.py::test_tensorboard_log_graph",),
    ),
    Item(
        "loggers",
        "Logger warnings: texts differ",
        "g",
        "UserWarning 'Could not log computational graph to TensorBoard: The `model.example_input_array` attribute "
        "is not set or `input_array` was not given.'; CSVLogger: 'Experiment logs directory <dir> exists and is not "
        "empty. Previous log files in this directory will be deleted when the new ones are saved!'",
        "UserWarnings in accelplug's words ('the model's example_input_array is not set ...'; '... already holds "
        "metrics.csv; it is replaced by this run's ...')",
        "loggers/tensorboard.py:log_graph; loggers/csv_logs.py:CSVLogger",
        (
            _P + "loggers/test_tensorboard.py::test_tensorboard_log_graph_warning_no_example_input_array",
            _P + "loggers/test_csv.py::test_manual_versioning_file_exists",
        ),
    ),
    Item(
        "optim",
        "`configure_optimizers` returning None or a scheduler dict with extra keys is refused",
        "d",
        "`configure_optimizers()` returning None trains without an optimizer (UserWarning '... will run with no "
        "optimizer'); unknown keys in an lr_scheduler dict give RuntimeWarning 'Found unsupported keys in the lr "
        "scheduler dict: {...}'",
        "MisconfigurationException ('returned None, which holds no usable optimizer'; 'an lr_scheduler dict has "
        "unknown key(s)')",
        "optimizers.py (the configure_optimizers parser)",
        (
            _P + "trainer/optimization/test_optimizers.py::test_none_optimizer",
            _P + "trainer/optimization/test_optimizers.py::test_lr_scheduler_with_extra_keys_warns",
            _P + "trainer/test_trainer.py::test_trainer_access_in_configure_optimizers",
        ),
    ),
    Item(
        "optim",
        "`configure_optimizers` shapes Lightning refuses are accepted",
        "e",
        "MisconfigurationException for an optimizer dict with unknown structure ('Unknown configuration for model "
        "optimizers') and for a scheduler attached to an optimizer that was not returned ('attached with an "
        "optimizer that wasn't returned')",
        "accepted",
        "optimizers.py (the configure_optimizers parser)",
        (
            _P + "trainer/optimization/test_optimizers.py::test_invalid_optimizer_dict_raises",
            _P + "trainer/optimization/test_optimizers.py::test_invalid_optimizer_in_scheduler",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ tuner
    Item(
        "tuner",
        "`trainer.train_dataloader` is None after `scale_batch_size`",
        "c",
        "after `tuner.scale_batch_size(...)`, `trainer.train_dataloader` is the loader rebuilt with the found batch "
        "size (its `batch_size`, `dataset` readable); the attribute it scaled (model's, datamodule's or hparams') "
        "holds the new size",
        "`trainer.train_dataloader` is None",
        "trainer/tuning.py (the batch-size search), trainer/views.py:train_dataloader",
        (
            _T + "test_scale_batch_size_method_with_model_or_datamodule[2--1]",
            _T + "test_scale_batch_size_method_with_model_or_datamodule[2-2]",
            _T + "test_scale_batch_size_method_with_model_or_datamodule[16-16]",
            _T + "test_auto_scale_batch_size_set_model_attribute",
            _T + "test_auto_scale_batch_size_set_datamodule_attribute",
            _T + "test_dataloader_reset_with_scale_batch_size",
        ),
    ),
    Item(
        "tuner",
        "`scale_batch_size(datamodule=dm)` does not find `dm.batch_size`",
        "d",
        "the batch-size attribute is looked up on the module, then on the datamodule given to the call (and their "
        "`hparams`)",
        "MisconfigurationException 'Field batch_size not found in `model`, `datamodule`, nor their `hparams`'",
        "trainer/tuning.py:check_batch_size_setup",
        (_T + "test_scale_batch_size_method_with_model_or_datamodule[None-2]",),
    ),
    Item(
        "tuner",
        "`scale_batch_size` refuses `method='validate'/'test'/'predict'`; BatchSizeFinder does not tune them",
        "d",
        "the batch size of validate/test/predict runs can be scaled (`method=` or a BatchSizeFinder callback in "
        "those calls); several eval loaders raise MisconfigurationException 'Batch size finder cannot be used with "
        "multiple ... dataloaders'",
        "refused: 'accelplug tunes the batch size of fits only'; the callback leaves the size unchanged in "
        "validate/test/predict",
        "trainer/tuning.py, callbacks/batch_size_finder.py",
        (
            _T + "test_tuner_with_evaluation_methods",
            _T + "test_batch_size_finder_callback",
            _T + "test_batch_size_finder_with_multiple_eval_dataloaders",
        ),
    ),
    Item(
        "tuner",
        "`scale_batch_size(max_trials=0)` is refused",
        "d",
        "`max_trials=0` runs no trial and returns the initial batch size",
        "MisconfigurationException 'max_trials=0: expected an int >= 1'",
        "callbacks/batch_size_finder.py:check_batch_size_arguments",
        (_T + "test_scale_batch_size_no_trials", _T + "test_scale_batch_size_max_trials_modes[0-power-2-2]"),
    ),
    Item(
        "tuner",
        "`BatchSizeFinder.setup(trainer, pl_module)` needs `stage`",
        "d",
        "`setup(trainer, pl_module, stage=None)`; with a distributed strategy it raises MisconfigurationException "
        "'Batch size finder is not supported with distributed strategies.'",
        "TypeError: setup() missing 1 required positional argument: 'stage'",
        "callbacks/batch_size_finder.py:BatchSizeFinder.setup",
        (_T + "test_batch_size_finder_with_distributed_strategies",),
    ),
    Item(
        "tuner",
        "Tuner with a distributed strategy: not refused with Lightning's error",
        "g",
        "`Tuner(trainer).scale_batch_size/lr_find` with `strategy='ddp'`, 2 devices raises ValueError '... is not "
        "supported with distributed strategies' before anything starts",
        "the relaunch check runs first: MisconfigurationException 'strategy='ddp' with 2 devices runs one process "
        "per device, and this interpreter was not started from a script file ...'",
        "tuner/tuning.py:Tuner (no strategy check before fit), launcher.py:relaunch_if_needed",
        (_P + "tuner/test_tuning.py::test_tuner_with_distributed_strategies",),
    ),
    Item(
        "private",
        "Tuner and optimizer tests that call or patch Lightning's private helpers",
        "a",
        "the tests patch `lightning.pytorch.tuner.batch_size_scaling.is_oom_error` or call "
        "`_configure_optimizers`/`_configure_schedulers_automatic_opt` directly",
        "accelplug has no such module-level helpers there",
        "-",
        (
            _T + "test_dataloader_batch_size_updated_on_failure",
            _P + "trainer/optimization/test_optimizers.py::test_onecyclelr_with_epoch_interval_warns",
            _P + "trainer/optimization/test_optimizers.py::test_optimizer_config_dict_with_extra_keys_warns",
            _P + "trainer/optimization/test_optimizers.py::test_multiple_optimizer_config_dicts_with_extra_keys_warns",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ loops
    Item(
        "data",
        "Steps taking `dataloader_iter` get a batch",
        "f",
        "a `training_step`/`validation_step`/`test_step`/`predict_step` whose first argument is named "
        "`dataloader_iter` receives the iterator itself and pulls its batches (and a dict of loaders may be given)",
        "the step gets a batch tensor: TypeError 'Tensor' object is not an iterator; a dict of lists is refused as "
        "a loader",
        "strategies/prepared.py (step call with a batch), trainer/loops/evaluation.py:EvaluationLoop._step, "
        "data/sources.py:check_loader",
        (
            _L + "test_fetchers.py::test_training_step_with_dataloader_iter",
            _L + "test_fetchers.py::test_step_methods_with_dataloader_iter",
            _L + "test_fetchers.py::test_stop_iteration_with_dataloader_iter",
            _L + "test_fetchers.py::test_fetching_is_profiled",
            _L + "test_evaluation_loop.py::test_evaluation_loop_dataloader_iter_multiple_dataloaders",
            _L + "test_training_epoch_loop.py::test_training_loop_dataloader_iter_multiple_dataloaders",
        ),
    ),
    Item(
        "hooks",
        "A step or batch hook with an extra `dataloader_idx` and one loader: TypeError, not Lightning's RuntimeError",
        "g",
        "RuntimeError explaining that `validation_step`/`on_*_batch_start`/`on_*_batch_end` take `dataloader_idx` "
        "but there is only one dataloader",
        "the call fails with TypeError 'missing 1 required positional argument: dataloader_idx'",
        "trainer/loops/evaluation.py:EvaluationLoop._step, trainer/loops/prediction.py, trainer/dispatch/hooks.py",
        (
            _L + "test_evaluation_loop.py::test_invalid_dataloader_idx_raises_*",
            _L + "test_prediction_loop.py::test_invalid_dataloader_idx_raises_*",
        ),
    ),
    Item(
        "data",
        "validate/test/predict refuse a CombinedLoader in a non-sequential mode",
        "d",
        "evaluation loops accept `CombinedLoader(mode='max_size_cycle'|'min_size'|'max_size')` and iterate it "
        "(batches of all loaders at once)",
        "MisconfigurationException '... takes only CombinedLoader(..., mode='sequential')'",
        "data/sources.py (the CombinedLoader mode check)",
        (_L + "test_evaluation_loop.py::test_evaluation_loop_non_sequential_mode_supprt",),
    ),
    Item(
        "data",
        "Evaluation samplers' `set_epoch` is not called",
        "e",
        "a val/test loader's sampler (or batch sampler) with `set_epoch` gets `set_epoch(current_epoch)` at every "
        "evaluation run",
        "never called",
        "trainer/loops/evaluation.py:EvaluationLoop.evaluate (the training loader's set_epoch only, in fit.py)",
        (_L + "test_evaluation_loop.py::test_evaluation_loop_sampler_set_epoch_called",),
    ),
    Item(
        "data",
        "Persistent-worker DataLoaders: workers are not shut down as Lightning does",
        "e",
        "at the end of each epoch (and of the fit) the loaders' worker iterators are shut down "
        "(`_shutdown_workers` after epochs 1, 2, 3 ...)",
        "shut down at other points (or not for evaluation loaders)",
        "trainer/loops/fit.py, trainer/loops/evaluation.py (end of epoch)",
        (_L + "test_loops.py::test_workers_are_shutdown",),
    ),
    Item(
        "data",
        "A DataModule's batch-transfer hooks are not used",
        "f",
        "`on_before_batch_transfer`, `transfer_batch_to_device`, `on_after_batch_transfer` defined on the "
        "LightningDataModule are called (once per batch) when the module does not define them",
        "the datamodule's hooks are ignored: the untransformed batch reaches `training_step` (ValueError: too many "
        "values to unpack)",
        "trainer/loops/transfer.py, trainer/setup.py (hook lookup on the module only)",
        (_L + "test_fetchers.py::test_transfer_hooks_with_unpacking",),
    ),
    Item(
        "data",
        "A `None` batch is passed to `training_step`",
        "e",
        "a batch that is None is skipped (training_step not called, `outputs` None in `on_train_batch_end`) with "
        "UserWarning '... train_dataloader yielded None ...'",
        "`training_step(None, i)` is called (the model then fails)",
        "trainer/loops/fit.py:FitLoop.general_batch",
        (_L + "test_training_loop_flow_scalar.py::test_training_step_none_batches",),
    ),
    Item(
        "hooks",
        "`on_train_batch_end` gets outputs that still hold the graph",
        "e",
        "the `outputs` given to `on_train_batch_end` are detached (no autograd graph kept alive)",
        "the loss in `outputs` still has its grad_fn",
        "trainer/loops/fit.py:FitLoop._batch_end",
        (_L + "test_training_loop_flow_dict.py::*", _L + "test_training_loop_flow_scalar.py::*"),
    ),
    Item(
        "optim",
        "Invalid step outputs and an `optimizer_step` that skips the closure are not refused as Lightning refuses them",
        "g",
        "automatic optimization: MisconfigurationException '... must return a Tensor, a dict, or None'; manual "
        "optimization: MisconfigurationException for an invalid `training_step` return; an overridden "
        "`optimizer_step` that never calls the closure raises MisconfigurationException 'The closure hasn't been "
        "executed'; skipping `training_step` (return None) with world_size > 1 raises RuntimeError",
        "another message; no error for the manual return, the unexecuted closure and the skipped step "
        "(`strategy.world_size` is read-only)",
        "trainer/loops/optimization.py:Optimization.forward, trainer/loops/losses.py",
        (
            _L + "optimization/test_automatic_loop.py::test_warning_invalid_trainstep_output",
            _L + "optimization/test_manual_loop.py::test_warning_invalid_trainstep_output",
            _L + "optimization/test_closure.py::test_optimizer_step_no_closure_raises",
            _L + "optimization/test_automatic_loop.py::test_skip_training_step_not_allowed",
        ),
    ),
    Item(
        "checkpoint",
        "`checkpoint['loops']` differs from Lightning's; stateful loaders' state is not saved",
        "e",
        "the checkpoint's `loops` holds Lightning's loop progress structure (fit_loop, epoch_loop.batch_progress, "
        "... with `is_last_batch`, counters) and, for loaders with `state_dict`, a `combined_loader` entry that "
        "restores their position on resume",
        "other counters/flags; no `combined_loader` state (resumed loaders start over)",
        "trainer/checkpointing/lightning_loops.py, trainer/checkpointing/contents.py",
        (
            _L + "test_loops.py::test_loop_state_on_complete_run",
            _L + "test_loops.py::test_fit_loop_save_and_restore_dataloaders",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ loggers (2)
    Item(
        "paths",
        "`lightning.pytorch.loggers.litlogger` and `loggers.neptune` module paths missing",
        "b",
        "`from lightning.pytorch.loggers.litlogger import LitLogger` (and `loggers.neptune.NeptuneLogger`, which "
        "raises a RuntimeError pointing to the neptune package)",
        "no such module paths (accelplug exports LitLogger from `accelplug.pytorch.loggers` only; no NeptuneLogger)",
        "pytorch/loggers/__init__.py",
        (_P + "loggers/test_litlogger.py",),
    ),
    Item(
        "loggers",
        "A value logged as `step` does not set the logger's step",
        "e",
        "`self.log('step', v)` is taken out of the row and used as the `step` passed to `logger.log_metrics`",
        "`step` stays a metric; the logger gets the Trainer's own step",
        "trainer/run.py:Run.log_metrics, trainer/loops/readback.py:_publish",
        (_P + "loggers/test_logger.py::test_adding_step_key",),
    ),
    Item(
        "loggers",
        "CometLogger (offline) leaves files and a thread behind",
        "e",
        "a CometLogger pickled/used offline in a test leaves nothing in the working folder and no thread alive",
        "`.cometml-runs/*.zip` is written to the working folder; the harness reports left artifacts/threads",
        "loggers/comet.py:CometLogger",
        (_P + "loggers/test_all.py::test_loggers_pickle_all[CometLogger]",),
    ),
    Item(
        "private",
        "Logger tests whose fixtures patch the private availability flags",
        "a",
        "`tests_pytorch/loggers/conftest.py` mocks mlflow/wandb/comet by patching `lightning.pytorch.loggers.<x>."
        "_<X>_AVAILABLE` (and `lightning.fabric.loggers...`): the ~50 tests behind these fixtures check public "
        "logger behaviour but cannot run until the tool gives the fixtures a stand-in",
        "accelplug's loggers have no such module flags",
        "-",
        (
            _P + "loggers/test_mlflow.py",
            _P + "loggers/test_wandb.py",
            _P + "loggers/test_comet.py",
            _P + "loggers/test_all.py::test_loggers_fit_test_all",
            _P + "loggers/test_all.py::test_loggers_save_dir_and_weights_save_path_all",
            _P + "loggers/test_all.py::test_loggers_pickle_all",
            _P + "loggers/test_all.py::test_logger_with_prefix_all",
            _P + "loggers/test_all.py::test_logger_default_name",
            _P + "loggers/test_all.py::test_logger_default_name_*",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ plugins
    Item(
        "paths",
        "DeepSpeed/XLA/TransformerEngine precision classes missing from Lightning's paths",
        "b",
        "`lightning.pytorch.plugins.DeepSpeedPrecision`, `plugins.precision.deepspeed.DeepSpeedPrecision`, "
        "`lightning.fabric.plugins.precision.*` exist without the backends installed (they raise when used "
        "without them; their argument checks run)",
        "missing (the backends are out-of-tree plugins; `accelplug.fabric.plugins.precision` does not exist)",
        "pytorch/plugins/__init__.py, pytorch/plugins/precision.py, fabric/plugins/__init__.py",
        (
            _P + "plugins/precision/test_deepspeed_precision.py",
            _P + "plugins/precision/test_all.py",
            _P + "plugins/precision/test_transformer_engine.py",
        ),
    ),
    Item(
        "paths",
        "`lightning.fabric.plugins.CheckpointIO`/`TorchCheckpointIO`/`io.checkpoint_io` missing",
        "b",
        "the CheckpointIO classes are importable from `lightning.fabric.plugins` (and `...plugins.io.checkpoint_io`)",
        "missing under accelplug.fabric.plugins (accelplug has them at `accelplug.plugins`)",
        "fabric/plugins/__init__.py",
        (
            _P + "plugins/test_async_checkpoint.py",
            _P + "plugins/test_checkpoint_io_plugin.py",
        ),
    ),
    Item(
        "strategies",
        "`precision='bf16-true'/'16-true'/'64-true'`: default dtype and module init differ",
        "e",
        "with a true-half or double precision the default dtype is the precision's inside the forward context and "
        "inside `configure_model` (parameters created there are bf16/fp16/fp64; `torch.tensor([0.])` in a step is "
        "float64 under 64-true), and complex buffers keep their complex dtype",
        "the default dtype stays float32 in those contexts; parameters are created in float32 and cast afterwards",
        "precision/ (the true-precision classes' contexts), trainer/setup.py (configure_model call)",
        (
            _P + "plugins/precision/test_half.py",
            _P + "plugins/precision/test_double.py",
        ),
    ),
    Item(
        "strategies",
        "FSDPPrecision: config, warnings and scaler calls differ",
        "e",
        "`FSDPPrecision(...).mixed_precision_config` gives param/reduce/buffer dtypes per precision (and warns for "
        "'16-true'); `backward`/`optimizer_step` go through its `scaler` (scale, step with the kwargs given); an "
        "invalid precision raises '... is not supported in FSDP. `precision` must be one of'",
        "another config object (no `buffer_dtype`, None param dtype for 32-true), no warning, the scaler not "
        "called, another message",
        "plugins/precision/ (the FSDP precision plugin), strategies/fsdp.py",
        (_P + "plugins/precision/test_fsdp.py",),
    ),
    Item(
        "strategies",
        "`MixedPrecision(precision='16')`: message lacks Lightning's phrase",
        "g",
        "ValueError \"Passed `MixedPrecision(precision='16')`. Precision must be '16-mixed' or 'bf16-mixed'\"",
        "refused in accelplug's words",
        "plugins/precision/precision.py",
        (_P + "plugins/test_amp_plugins.py::test_amp_precision_plugin_parameter_validation",),
    ),
    # ------------------------------------------------------------------------------------------------ strategies
    Item(
        "strategies",
        "Strategy constructors refuse `accelerator=`, `parallel_devices=`, `precision_plugin=`",
        "d",
        "`SingleDeviceStrategy(device, accelerator=..., precision_plugin=...)`, `DDPStrategy(...)`, "
        "`FSDPStrategy(parallel_devices=..., precision_plugin=HalfPrecision(...))` accept these arguments (the "
        "Trainer fills them in when absent)",
        "MisconfigurationException '... accelplug's Trainer chooses this itself; use Trainer(...=...) and leave ... "
        "at None' (issue 29: `DDPStrategy(accelerator='cpu')` refused on purpose; Lightning accepts it)",
        "strategies/base.py:Strategy.__init__ (the refusal), strategies/ddp.py, strategies/single_device.py",
        (
            _P + "strategies/test_common.py::test_module_init_context",
            _P + "strategies/test_fsdp.py::test_forbidden_precision_raises",
            _P + "strategies/test_fsdp.py::test_set_timeout",
            _P + "strategies/test_single_device.py::test_process_dataloader_gets_called_as_expected",
        ),
        messages=("accelplug's Trainer chooses this itself",),
    ),
    Item(
        "strategies",
        "Strategy public methods and attributes missing or read-only",
        "c",
        "`Strategy.root_device` (a device before setup: `SingleDeviceStrategy().root_device == cpu`, settable in "
        "subclasses), `setup(trainer)`, `setup_environment()` with no arguments, `load_checkpoint(path)`, "
        "`load_optimizer_state_dict(checkpoint)`, FSDP's `mixed_precision_config`, `kwargs`, `cpu_offload` as a "
        "`CPUOffload`, `sharding_strategy` as a `ShardingStrategy`, and the launcher's `world_size` on the strategy",
        "missing, None before the run, read-only, or stored as given (True, 'FULL_SHARD')",
        "strategies/base.py:Strategy, strategies/single_device.py, strategies/ddp.py, strategies/fsdp.py, "
        "strategies/parallel.py",
        (
            _P + "strategies/test_single_device.py::test_single_cpu",
            _P + "strategies/test_ddp_integration.py::test_ddp_cpu",
            _P + "strategies/test_ddp.py::test_ddp_process_group_backend",
            _P + "strategies/test_custom_strategy.py::test_strategy_lightning_restore_optimizer_and_schedulers",
            _P + "strategies/test_fsdp.py::test_custom_mixed_precision",
            _P + "strategies/test_fsdp.py::test_strategy_cpu_offload",
            _P + "strategies/test_fsdp.py::test_sharding_strategy",
            _P + "strategies/test_fsdp.py::test_use_orig_params",
            _P + "strategies/test_fsdp.py::test_load_unknown_checkpoint_type",
            _P + "strategies/test_model_parallel.py::test_validate_device_mesh_dimensions",
            _P + "strategies/test_model_parallel.py::test_fsdp_v1_modules_unsupported",
            _P + "strategies/test_model_parallel.py::test_configure_model_required",
            _P + "strategies/test_model_parallel.py::test_meta_device_materialization",
            _P + "strategies/launchers/test_multiprocessing.py::test_collect_rank_zero_results",
            _P + "trainer/test_trainer.py::test_trainer_predict_grad",
            _P + "trainer/test_trainer.py::test_trainer_predict_no_return",
            _P + "trainer/test_trainer.py::test_init_module_context",
        ),
    ),
    Item(
        "strategies",
        "FSDP/ModelParallel strategies: checks and annotations differ",
        "e",
        "`HYBRID_SHARD` without a process group/device mesh raises RuntimeError; `save_checkpoint(..., "
        "storage_options=...)` raises TypeError '`FSDPStrategy.save_checkpoint(..., storage_options=...)` is not "
        "supported'; the `device_mesh` annotation is a typing object",
        "not refused; another message; the annotation is the string 'Any' (jsonargparse cannot use it)",
        "strategies/fsdp.py (from __future__ annotations; checks), strategies/model_parallel.py",
        (
            _P + "strategies/test_fsdp.py::test_hybrid_shard_configuration",
            _P + "strategies/test_fsdp.py::test_save_checkpoint_storage_options",
            _P + "strategies/test_model_parallel.py::test_save_checkpoint_storage_options",
            _P + "strategies/test_fsdp.py::test_device_mesh_type_annotation",
        ),
    ),
    Item(
        "paths",
        "`lightning.pytorch.strategies.{fsdp,model_parallel,ddp}` modules and `StrategyRegistry` missing",
        "b",
        "the strategy modules are importable (tests patch `lightning.pytorch.strategies.fsdp.FSDPStrategy.broadcast`,"
        " `...fsdp.torch.load`); `lightning.pytorch.strategies.StrategyRegistry` registers and lists strategies",
        "`accelplug.pytorch.strategies` is one module re-exporting classes; no StrategyRegistry",
        "pytorch/strategies.py",
        (
            _P + "strategies/test_registry.py",
            _P + "strategies/test_fsdp.py::test_save_checkpoint_path_exists",
            _P + "strategies/test_fsdp.py::test_save_checkpoint_unknown_state_dict_type",
            _P + "strategies/test_fsdp.py::test_lazy_load_full_state_dict",
            _P + "strategies/test_model_parallel.py::test_save_checkpoint_path_exists",
        ),
    ),
    Item(
        "paths",
        "`lightning.fabric.plugins.environments` (ClusterEnvironment, LightningEnvironment, SLURMEnvironment...) "
        "missing",
        "b",
        "`from lightning.fabric.plugins.environments import LightningEnvironment, SLURMEnvironment, ...` (and "
        "`lightning.pytorch.plugins.environments`)",
        "no `fabric.plugins.environments` module (accelplug has `accelplug.environments`)",
        "fabric/plugins/__init__.py",
        (
            _P + "strategies/test_ddp_integration.py::test_configure_launcher_create_processes_externally",
            _P + "strategies/test_ddp_integration.py::test_incorrect_ddp_script_spawning",
        ),
        messages=(
            "lightning.fabric.plugins.environments",
            "module 'accelplug.fabric.plugins' has no attribute 'environments'",
        ),
    ),
    Item(
        "flags",
        "`max_steps=0` is refused",
        "d",
        "`Trainer(max_steps=0)` is accepted (fit runs no step)",
        "MisconfigurationException 'max_steps=0 is invalid: expected an int >= 1, or -1/None'",
        "trainer/options/entries.py:validate_options",
        (_P + "strategies/launchers/test_multiprocessing.py::test_memory_sharing_disabled",),
        messages=("max_steps=0 is invalid",),
    ),
    # ------------------------------------------------------------------------------------------------ utilities
    Item(
        "paths",
        "`lightning.pytorch.utilities.model_summary.model_summary` (ModelSummary, summarize) missing",
        "b",
        "`from lightning.pytorch.utilities.model_summary.model_summary import ModelSummary, summarize` (public "
        "summary objects with `param_nums`, `layer_names`, `in_sizes`, `out_sizes`, `max_depth`...)",
        "no such module path (accelplug's summary lives in callbacks/model_summary.py and trainer/display)",
        "pytorch/utilities/__init__.py",
        (_P + "utilities/test_model_summary.py",),
    ),
    Item(
        "paths",
        "Public utility functions missing from `lightning.pytorch.utilities.*`",
        "b",
        "`utilities.seed.isolate_rng`, `utilities.data.extract_batch_size`, `utilities.memory.recursive_detach`, "
        "`utilities.parsing.is_picklable/clean_namespace/parse_class_init_keys/collect_init_args`, "
        "`utilities.signature_utils.is_param_in_hook_signature`, `utilities.types` protocols (Stateful), "
        "`utilities.compile.from_compiled/to_uncompiled`, "
        "`utilities.upgrade_checkpoint` (module), `utilities.exceptions.SIGTERMException`",
        "missing",
        "pytorch/utilities/*.py",
        (
            _P + "utilities/test_seed.py::test_isolate_rng*",
            _P + "utilities/test_parsing.py::test_clean_namespace",
            _P + "utilities/test_parsing.py::test_parse_class_init_keys",
            _P + "utilities/test_parsing.py::test_collect_init_args",
            _P + "utilities/test_signature_utils.py",
            _P + "utilities/test_types.py",
            _P + "utilities/test_data.py::test_extract_batch_size",
            _P + "utilities/test_memory.py::test_recursive_detach",
            _P + "utilities/test_parsing.py::test_is_picklable",
            _P + "utilities/test_compile.py",
            _P + "utilities/test_upgrade_checkpoint.py",
            _P + "utilities/test_auto_restart.py",
        ),
    ),
    Item(
        "data",
        "CombinedLoader: modes, errors and pickling differ",
        "e",
        "`CombinedLoader` in every mode supports lists/dicts of iterables, `len()` before `iter()` raises "
        "RuntimeError with Lightning's text, `flattened` setter checks the length, the iterator can be pickled, "
        "and 'min_size' shuts down exhausted workers",
        "RuntimeError inside accelplug for lists, other messages, a None iterator after pickling, one mode hanging",
        "data/combined_loader.py:CombinedLoader",
        (_P + "utilities/test_combined_loader.py",),
    ),
    Item(
        "flags",
        "Utility messages and warnings differ (grad_norm, has_len_all_ranks, model size, PossibleUserWarning switch)",
        "g",
        "`grad_norm(norm_type=-1)` raises ValueError with Lightning's text; `has_len_all_ranks` warns for a loader "
        "with length 0 on some ranks; the summary warns for an unsupported precision; "
        "`POSSIBLE_USER_WARNINGS=0` disables PossibleUserWarning; `GradClipAlgorithmType.supported_types()`",
        "other messages, no warnings, no such enum helper",
        "utilities/grads.py, callbacks/model_summary.py, utilities/warnings.py, utilities/enums.py",
        (
            _P + "utilities/test_grads.py",
            _P + "utilities/test_data.py::test_has_len_all_rank",
            _P + "utilities/test_warnings.py",
            _P + "utilities/test_enums.py",
        ),
    ),
    Item(
        "checkpoint",
        "`load_from_checkpoint` warnings and strict-loading message differ",
        "g",
        "UserWarning '... contains no parameters' for a checkpoint with an empty state_dict; with "
        "`strict_loading=False` on the module and `strict=True` given, ValueError '... in conflict with "
        "`strict_loading`'",
        "another warning text; another message",
        "module_saving.py (load_from_checkpoint)",
        (
            _P + "core/test_saving.py::test_load_from_checkpoint_warn_on_empty_state_dict",
            _P + "core/test_saving.py::test_load_from_checkpoint_strict",
        ),
    ),
    Item(
        "profilers",
        "SimpleProfiler: report not written to the log, `profilers.simple` module missing",
        "e",
        "`SimpleProfiler()` logs its 'Profiler Report' (once per stage) and writes `fit-<name>.txt` in "
        "`trainer.log_dir` (a str); `lightning.pytorch.profilers.simple` is a module (tests patch `math.fsum` in it)",
        "no report in the log; `trainer.log_dir` a Path; no such module path",
        "profilers/ (SimpleProfiler.summary/describe), pytorch/profilers/__init__.py",
        (
            _P + "profilers/test_profiler.py::test_simple_profiler_dirpath",
            _P + "profilers/test_profiler.py::test_simple_profiler_with_nonexisting_log_dir",
            _P + "profilers/test_profiler.py::test_simple_profiler_logs",
            _P + "profilers/test_profiler.py::test_simple_profiler_uses_math_fsum",
        ),
    ),
    Item(
        "callbacks",
        "RichProgressBar: `progress` is None after the run; fast_dev_run's DummyLogger",
        "c",
        "`RichProgressBar.progress` (the rich Progress with its tasks: sanity, train, val counters) stays readable "
        "after fit/validate; `trainer.logger` is a DummyLogger under `fast_dev_run`",
        "`progress` is None once the run ends; the logger is None",
        "callbacks/progress.py:RichProgressBar",
        (
            _P + "callbacks/progress/test_rich_progress_bar.py::test_rich_progress_bar_update_counts",
            _P + "callbacks/progress/test_rich_progress_bar.py::test_rich_progress_bar_num_sanity_val_steps",
            _P + "callbacks/progress/test_rich_progress_bar.py::test_rich_progress_bar_counter_with_val_check_interval",
            _P + "callbacks/progress/test_rich_progress_bar.py::test_rich_progress_bar_metrics_fast_dev_run",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ callbacks (2)
    Item(
        "callbacks",
        "Callbacks from `configure_callbacks` are not all added to `trainer.callbacks`",
        "e",
        "the callbacks `configure_callbacks()` returns are appended to `trainer.callbacks` at every fit (replacing "
        "the Trainer's callbacks of the same type), Mock(spec=Callback) included",
        "some returned callbacks are missing from `trainer.callbacks`",
        "trainer/setup.py (configure_callbacks merge)",
        (
            _P + "callbacks/test_callbacks.py::test_callbacks_configured_in_model",
            _P + "callbacks/test_callbacks.py::test_configure_callbacks_hook_multiple_calls",
        ),
    ),
    Item(
        "callbacks",
        "Resuming without some checkpointed callbacks: warning text",
        "g",
        "UserWarning 'Be aware that when using `ckpt_path`, callbacks used to create the checkpoint need to be "
        "provided during `Trainer` instantiation. Please add the following callbacks: [...]'",
        "another warning text",
        "trainer/checkpointing/contents.py (callback states on restore)",
        (
            _P + "callbacks/test_callbacks.py::test_resume_incomplete_callbacks_list_warning",
            _P + "trainer/test_trainer.py::test_on_load_checkpoint_missing_callbacks",
        ),
    ),
    Item(
        "callbacks",
        "DeviceStatsMonitor: no error without a logger; stages logged differently; module path missing",
        "e",
        "DeviceStatsMonitor with `logger=False` raises MisconfigurationException 'Cannot use `DeviceStatsMonitor` "
        "callback with `Trainer(logger=False)`'; it logs device stats for train/validation/test stages with their "
        "prefixes; `lightning.pytorch.callbacks.device_stats_monitor` is a module",
        "no error; stage prefixes not as Lightning's; no such module path",
        "callbacks/monitors.py:DeviceStatsMonitor",
        (_P + "callbacks/test_device_stats_monitor.py",),
    ),
    Item(
        "callbacks",
        "Timer: `Trainer(max_time=...)` adds no Timer; messages and log differ; `callbacks.timer` path missing",
        "e",
        "`Trainer(max_time=...)` adds a `Timer` callback to `trainer.callbacks`; stopping logs INFO 'Time limit "
        "reached.'; a bad duration raises '... format DD:HH:MM:SS', a bad interval 'Unsupported parameter value'; "
        "`lightning.pytorch.callbacks.timer` is a module",
        "no Timer in `trainer.callbacks` (max_time is handled inside the loop); no log line; accelplug's words; no "
        "module path",
        "trainer/loops/limits.py (max_time), callbacks/timer.py:Timer",
        (_P + "callbacks/test_timer.py",),
    ),
    Item(
        "callbacks",
        "ThroughputMonitor: crash with validation; `measure_flops`/`get_available_flops` paths",
        "f",
        "ThroughputMonitor works with validation during fit; `lightning.fabric.utilities.throughput.measure_flops` "
        "exists and `lightning.pytorch.callbacks.throughput_monitor.get_available_flops` can be patched",
        "StopIteration raised from the plugin registry during fit with validation (registry.py -> isolation.py); "
        "the module paths lack those names",
        "callbacks/throughput_monitor.py, registry.py (device FLOPs lookup), isolation.py",
        (_P + "callbacks/test_throughput_monitor.py",),
    ),
    Item(
        "callbacks",
        "GradientAccumulationScheduler with `accumulate_grad_batches`: message",
        "g",
        "ValueError/MisconfigurationException '... `accumulate_grad_batches` and are using the "
        "`GradientAccumulationScheduler` callback'",
        "accelplug's words",
        "trainer/options/checks.py",
        (_P + "callbacks/test_gradient_accumulation_scheduler.py::test_raises_when_accumulate_grad_batches_*",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.callbacks.rich_model_summary` and `utilities.model_summary.summarize` missing",
        "b",
        "`lightning.pytorch.callbacks.rich_model_summary` (patched by tests) and `summarize(model)`",
        "missing module paths/names",
        "pytorch/callbacks/__init__.py, pytorch/utilities/__init__.py",
        (_P + "callbacks/test_rich_model_summary.py",),
    ),
    Item(
        "private",
        "Tests that reach a private attribute of a Trainer, loop or callback (found in the error's text)",
        "a",
        "the test (or a callback it defines) reads or patches a `_`-attribute of Lightning's objects "
        "(`fit_loop._skip_backward`, ...), so the failure shows an AttributeError on a private name",
        "accelplug's objects have other private parts",
        "-",
        (),
        messages=("object has no attribute '_", "does not have the attribute '_"),
    ),
    # ------------------------------------------------------------------------------------------------ models
    Item(
        "paths",
        "`lightning.pytorch.accelerators.XLAAccelerator` (and `fabric.accelerators.XLAAccelerator`) missing",
        "b",
        "`XLAAccelerator.is_available()` answers (False without torch_xla); test files call it at import in "
        "`skipif` conditions",
        "missing, so test_tpu.py and test_all_gather_grad.py do not import",
        "pytorch/accelerators.py, fabric/accelerators.py",
        (),
        messages=("XLAAccelerator",),
    ),
    Item(
        "strategies",
        "Mixed precision plugins have no `device`",
        "c",
        "`trainer.precision_plugin.device` ('cpu'/'cuda') on MixedPrecision",
        "AttributeError: 'FP16MixedPrecision' object has no attribute 'device'",
        "precision/ (FP16MixedPrecision, BF16MixedPrecision)",
        (_P + "models/test_amp.py::test_amp_cpus",),
    ),
    Item(
        "fabric",
        "`fabric.setup` refuses a Mock as the module",
        "d",
        "`fabric.setup(Mock(spec=LightningModule))` is accepted (Fabric calls the module's hooks)",
        "MisconfigurationException 'expected a torch.nn.Module, got a Mock'",
        "fabric/preparation.py",
        (_P + "models/test_fabric_integration.py::test_fabric_call_lightning_module_hooks",),
    ),
    Item(
        "checkpoint",
        "Resume errors and warnings: other type/words",
        "g",
        "`fit(ckpt_path=<missing file>)` raises FileNotFoundError 'Checkpoint file not found: ...'; resuming from a "
        "checkpoint saved mid-epoch warns 'You're resuming from a checkpoint that ended before the epoch ended'",
        "MisconfigurationException 'no such file'; another warning text",
        "trainer/checkpointing/format.py, trainer/checkpointing/auto_resume.py, trainer/checkpointing/contents.py",
        (
            _P + "models/test_restore.py::test_try_resume_from_non_existing_checkpoint",
            _P + "models/test_restore.py::test_restarting_mid_epoch_raises_warning",
        ),
    ),
    Item(
        "hooks",
        "`to_torchscript`/`to_tensorrt`: messages; nested modules need a Trainer",
        "g",
        "ValueError 'The 'method' parameter only supports 'script' or 'trace'', '... requires either "
        "`example_inputs` or `model.example_input_array`', ModuleNotFoundError '`BoringModel.to_tensorrt` requires "
        "`torch_tensorrt` to be installed'; scripting a module with nested LightningModules works without a Trainer",
        "accelplug's words; RuntimeError 'GrandChild is not attached to a Trainer' while scripting",
        "module_saving.py (to_torchscript, to_tensorrt), module.py:LightningModule.trainer",
        (
            _P + "models/test_torchscript.py::test_torchcript_invalid_method",
            _P + "models/test_torchscript.py::test_torchscript_with_no_input",
            _P + "models/test_torchscript.py::test_torchscript_script_recursively",
            _P + "models/test_torch_tensorrt.py::test_missing_tensorrt_package",
        ),
    ),
    Item(
        "paths",
        "`lightning.fabric.utilities.cloud_io.get_filesystem` missing",
        "b",
        "`get_filesystem(path)` returns the fsspec filesystem of a path",
        "no `fabric.utilities.cloud_io` module",
        "fabric/utilities/__init__.py",
        (),
        messages=("cloud_io.get_filesystem",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.utilities.migration` (migrate_checkpoint, pl_legacy_patch) and `__version__` missing",
        "b",
        "`lightning.pytorch.__version__` and `utilities.migration.migrate_checkpoint/pl_legacy_patch` upgrade old "
        "checkpoints",
        "no `__version__` on accelplug.pytorch, no migration module",
        "pytorch/__init__.py, pytorch/utilities/__init__.py",
        (_P + "utilities/migration/*",),
    ),
    Item(
        "profilers",
        "PyTorchProfiler helpers and the profiler-name message",
        "b",
        "`lightning.pytorch.profilers.pytorch.RegisterRecordFunction` and its `warning_cache` (patched by tests); an "
        "unknown `profiler='...'` string raises MisconfigurationException with Lightning's text",
        "missing names; accelplug's words",
        "profilers/pytorch.py, trainer/options/entries.py",
        (
            _P + "profilers/test_profiler.py::test_register_record_function",
            _P + "profilers/test_profiler.py::test_trainer_profiler_incorrect_str_arg",
            _P + "profilers/test_profiler.py::test_pytorch_profiler_raises_warning_for_limited_steps",
        ),
    ),
    # ------------------------------------------------------------------------------------------------ trainer
    Item(
        "flags",
        "A KeyboardInterrupt inside `fit` ends the whole process",
        "f",
        "a KeyboardInterrupt raised during fit (here by a callback) is caught: `on_exception` hooks (callbacks, "
        "strategy, datamodule) run, `trainer.interrupted` is True, `trainer.state.status` 'interrupted', and fit "
        "returns",
        "it propagates out of `fit` and interrupted the pytest session; the run deselects these tests "
        "(`-k 'not KeyboardInterrupt and not test_keyboard_interrupt and not test_on_exception_hook'`) to measure "
        "the rest of the file",
        "trainer/process/interrupts.py, trainer/stages.py (exception handling around the loops)",
        (
            _TR + "test_on_exception_hook",
            _TR + "test_keyboard_interrupt",
            _TR + "test_trainer_calls_strategy_on_exception[KeyboardInterrupt]",
            _TR + "test_trainer_calls_datamodule_on_exception[KeyboardInterrupt]",
        ),
    ),
    Item(
        "checkpoint",
        "`ckpt_path` 'best'/'last'/None in validate/test/predict: Lightning's warnings and errors",
        "e",
        "`validate/test/predict(ckpt_path=None)` after fit warns and uses the best checkpoint; `ckpt_path='last'` "
        "with no checkpoint warns and uses the current weights; 'best' without a monitoring ModelCheckpoint raises "
        "ValueError '... is not configured to save the best model'; a missing file raises FileNotFoundError",
        "no warnings; 'last' with no checkpoint raises; other messages; MisconfigurationException 'no such file'",
        "trainer/checkpointing/auto_resume.py, trainer/checkpointing/format.py, trainer/stages.py",
        (
            _TR + "test_checkpoint_path_input",
            _TR + "test_checkpoint_path_input_last",
            _TR + "test_tested_checkpoint_path_best",
        ),
    ),
    Item(
        "flags",
        "Trainer misuse errors: other types and messages",
        "g",
        "TypeError for `fit(nn.Linear)` ('`model` must be a `LightningModule`'), for validate/test/predict without "
        "a module ('requires a `LightningModule`'), for `gradient_clip_val=(1, 2)`; AttributeError for "
        "`save_checkpoint` with no model; MisconfigurationException with Lightning's words for `max_epochs`, "
        "`check_val_every_n_epoch`, `gradient_clip_algorithm`",
        "MisconfigurationException (a ValueError) in accelplug's words",
        "trainer/options/entries.py:validate_options, trainer/options/arguments.py, trainer/properties.py, "
        "trainer/trainer.py:Trainer.save_checkpoint",
        (
            _TR + "test_trainer_error_when_input_not_lightning_module",
            _TR + "test_exception_when_lightning_module_is_not_set_on_trainer",
            _TR + "test_invalid_gradient_clip_value",
            _TR + "test_trainer_save_checkpoint_no_model_attached",
            _TR + "test_trainer_max_steps_and_epochs_validation",
            _TR + "test_check_val_every_n_epoch_exception",
            _TR + "test_invalid_gradient_clip_algo",
        ),
    ),
    Item(
        "limits",
        "`min_steps`/`min_epochs` not reached: the info message is not given once",
        "e",
        "when a stop is requested before `min_epochs`/`min_steps`, Lightning logs once '... was signaled to stop "
        "but the required `min_epochs=...` or `min_steps=...` has not been met'",
        "no such message",
        "trainer/loops/fit.py (stop handling), trainer/loops/limits.py",
        (_TR + "test_trainer_min_steps_and_min_epochs_not_reached",),
    ),
    Item(
        "data",
        "A loader over an IterableDataset with a sampler crashes when re-made",
        "f",
        "a DataLoader over an IterableDataset keeps working when the Trainer wraps/re-instantiates it (no sampler "
        "is passed for an IterableDataset)",
        "ValueError 'DataLoader with IterableDataset: expected unspecified sampler option'",
        "data/loaders.py (re-instantiation with a sampler)",
        (_TR + "test_index_batch_sampler_wrapper_with_iterable_dataset",),
    ),
    Item(
        "paths",
        "`lightning.pytorch.strategies.strategy` module path missing",
        "b",
        "`lightning.pytorch.strategies.strategy.Strategy.on_exception` can be patched (the module exists)",
        "no such module",
        "pytorch/strategies.py",
        (_TR + "test_trainer_calls_strategy_on_exception[RuntimeError]",),
    ),
]
