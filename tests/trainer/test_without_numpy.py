"""numpy is optional: training, checkpoints and resuming work in a process where it cannot be imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.processes import child_env

_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["numpy"] = None  # `import numpy` now fails, as without the package
    import warnings
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")  # torch's own, at import
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from accelplug import Trainer

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 1)
        def training_step(self, batch, i):
            return self.lin(batch[0]).pow(2).mean()
        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    root = sys.argv[1]
    data = DataLoader(TensorDataset(torch.randn(16, 2)), batch_size=4)
    first = Trainer(max_steps=2, default_root_dir=root, seed=0, enable_progress_bar=False)
    first.fit(M(), data)
    first.save_checkpoint(root + "/run.ckpt")
    second = Trainer(max_steps=4, default_root_dir=root, seed=0, enable_progress_bar=False)
    second.fit(M(), data, ckpt_path=root + "/run.ckpt")
    print("STEPS", first.global_step, second.global_step)
    """
)


def test_fit_checkpoint_and_resume_need_no_numpy(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert "STEPS 2 4" in result.stdout
