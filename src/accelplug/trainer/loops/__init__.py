"""The loops: what ``fit`` does with a prepared module, batch by batch, and why it stops.

The map (each name is the module that holds it; ``_stages.py`` calls in, nothing here calls out)::

    fit                                                     # .._stages.run_fit: set up, then
      on_fit_start
      sanity check: a few validation batches                # evaluation.EvaluationLoop.sanity_check
      FitLoop.run()                                         # fit.py
        epoch, skip = resume_position()                     # _resume.py: mid-epoch resumes replay the shuffle
        the first epoch's iterator (RNG saved, workers start)   # FitLoop._make_iterator (Lightning's place)
        on_train_start
        while no stop reason:                               # _limits.Limits.stop_reason (below)
          loaders reloaded; sampler.set_epoch; on_train_epoch_start
          a later epoch's iterator (RNG saved, workers start)
          for batch in the epoch (one fetched ahead):       # _resume.epoch_batches
            batch_step(batch)                               # one of three paths, chosen once per fit:
              fast_batch     move; zero_grad; forward; backward; step       (nothing runs in between)
              general_batch  transfer hooks; on_train_batch_start;          # _transfer.py
                             optimizer_step(closure: training_step, zero_grad, backward); clip; step
                                                            # optimization.py, _managed_optimizer.py
              manual_batch   transfer hooks; on_train_batch_start; training_step steps itself
            on_train_batch_end
            every log_every_n_steps: read the step values back, averaged   # _readback.py: the one
                                     across processes (the DDP stop flags ride along)  device->host read
            every val_check_interval batches: validate      # evaluation.EvaluationLoop.run_within_fit
            stop within the epoch? (should_stop, max_time, max_steps; at an accumulation boundary)
          validate (check_val_every_n_epoch); epoch schedulers; epoch values read back
          on_train_epoch_end (callbacks, module; checkpointing and early stopping last); loggers flushed
        on_train_end
      on_fit_end

    validate / test / sanity check                         # evaluation.EvaluationLoop.evaluate
      sampler.set_epoch; the first loader's iterator; eval mode (or on_{stage}_model_eval); on_{stage}_start;
      on_{stage}_epoch_start
      for each loader, each batch: transfer hooks; on_{stage}_batch_start; {stage}_step (inference mode);
                                   on_{stage}_batch_end
      on_{stage}_epoch_end; the epoch's values reduced and read back once; on_{stage}_end;
      each submodule's mode as it was (or on_{stage}_model_train)   # _modes.py; training never calls .train()

    predict                                                 # prediction.PredictionLoop.predict: the same
                                                            # walk, returning every predict_step output

Why a fit stopped is decided in one place, :meth:`._limits.Limits.stop_reason`, and kept as
``trainer.stop_reason`` (:class:`accelplug.trainer.state.StopReason`): ``max_steps`` optimizer steps
taken; ``max_epochs`` finished (1000 when neither limit is set, as in Lightning); ``max_time`` passed
(checked at batch boundaries); ``trainer.should_stop`` set by a callback or the module (it waits for
``min_steps``/``min_epochs``); SIGTERM/SIGINT (:mod:`accelplug.trainer.process.interrupts`: at the next
optimizer-step boundary every rank agrees on); a non-finite loss with ``nonfinite_loss="stop"``;
``fast_dev_run``'s steps or epoch done. The per-batch check costs no call and no clock read unless one
of them can apply (``fit.py``, ``run_epoch``).
"""
