"""Numbers about a model or a run: throughput, FLOPs, gradient norms.

:mod:`.throughput` keeps running totals and turns them into rates (Lightning Fabric's ``Throughput``, which the
``ThroughputMonitor`` callback drives), :mod:`.flops` counts one pass's FLOPs, :mod:`.grads` the gradient norms a
module logs. Each answers from what it is handed; none knows the Trainer.
"""
