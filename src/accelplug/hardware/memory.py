"""``lightning.pytorch.utilities.memory``'s names: telling an out-of-memory error from any other, and freeing
the accelerator's cached memory.

The batch-size finder keeps doubling until a step fails for want of memory and must re-raise every other
failure, so the test reads the exception itself, as Lightning's does: a ``RuntimeError`` with one argument
whose text is the allocator's (CUDA's "out of memory", cuDNN's unsupported-size status, or the CPU
allocator's refusal). ``torch.OutOfMemoryError`` is a ``RuntimeError`` with that text, so it is one too.
"""

from __future__ import annotations

import gc

import torch

__all__ = [
    "garbage_collection_cuda",
    "is_cuda_out_of_memory",
    "is_cudnn_snafu",
    "is_oom_error",
    "is_out_of_cpu_memory",
]


def _message(exception: BaseException) -> str | None:
    """The single string argument of a ``RuntimeError``, or None (the shape every allocator error has)."""
    if not isinstance(exception, RuntimeError) or len(exception.args) != 1:
        return None
    text = exception.args[0]
    return text if isinstance(text, str) else None


def is_oom_error(exception: BaseException) -> bool:
    """Whether ``exception`` says that memory ran out (on a GPU, in cuDNN or on the CPU)."""
    return is_cuda_out_of_memory(exception) or is_cudnn_snafu(exception) or is_out_of_cpu_memory(exception)


def is_cuda_out_of_memory(exception: BaseException) -> bool:
    text = _message(exception)
    return text is not None and "CUDA" in text and "out of memory" in text


def is_cudnn_snafu(exception: BaseException) -> bool:
    """cuDNN reports a batch too large for its kernels as an unsupported status rather than as memory."""
    text = _message(exception)
    return text is not None and "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED." in text


def is_out_of_cpu_memory(exception: BaseException) -> bool:
    text = _message(exception)
    return text is not None and "DefaultCPUAllocator: can't allocate memory" in text


def garbage_collection_cuda() -> None:
    """Collect Python garbage and hand CUDA's cached blocks back, so the next trial starts from free memory.

    Emptying the cache can itself fail for want of memory; that failure is swallowed, any other is raised.
    """
    gc.collect()
    try:
        torch.cuda.empty_cache()
    except RuntimeError as exception:
        if not is_oom_error(exception):
            raise
