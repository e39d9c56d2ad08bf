"""Environment variables real launchers set, captured on this project's test machine (Debian 12).

Each set keeps the variables accelplug's environments read or that tell launchers apart; values
are exactly as printed (``env``) in a process the launcher started. Reproduce them with:

- ``SRUN_TASK_1``, ``SBATCH_SCRIPT``: ``srun --ntasks=2 bash -c env`` and ``env`` in a batch script of
  ``sbatch --ntasks=2``, on the cluster of ``tests/clusters/slurm_cluster.py`` (Slurm 22.05.8; node ``vm``);
- ``TORCHRUN_RANK_1``: ``python -m torch.distributed.run --nproc-per-node 2`` (torch 2.13);
- ``OPEN_MPI_RANK_1``: ``mpirun.openmpi --allow-run-as-root -n 2 env`` (Open MPI 4.1.4);
- ``MPICH_RANK_1``: ``mpiexec.mpich -n 2 env`` (MPICH 4.0.2, Hydra).

LSF and Kubeflow cannot run here; their sets follow the launchers' documented variables (see
``accelplug.environments.lsf`` and ``.kubeflow``).
"""

from __future__ import annotations

import os

#: What launchers (Slurm, torchrun, MPI, LSF, Kubeflow) set: prefixes, and whole names.
_PREFIXES = ("SLURM_", "SLURMD_", "OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "JSM_", "LSB_", "TORCHELASTIC_")
_NAMES = (
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "NODE_RANK",
)


def launcher_variables() -> list[str]:
    """The launcher variables set in this process (a test clears them so the machine's own do not leak in)."""
    return [name for name in os.environ if name.startswith(_PREFIXES) or name in _NAMES]


SRUN_TASK_1 = {
    "SLURMD_NODENAME": "vm",
    "SLURM_CPUS_ON_NODE": "2",
    "SLURM_GTIDS": "0,1",
    "SLURM_JOBID": "1",
    "SLURM_JOB_ID": "1",
    # The capture ran `srun bash -c env` (job name "bash", which counts as interactive); `srun python
    # train.py` names the job after its program, as the cluster test shows.
    "SLURM_JOB_NAME": "python",
    "SLURM_JOB_NODELIST": "vm",
    "SLURM_JOB_NUM_NODES": "1",
    "SLURM_LOCALID": "1",
    "SLURM_NNODES": "1",
    "SLURM_NODEID": "0",
    "SLURM_NODELIST": "vm",
    "SLURM_NPROCS": "2",
    "SLURM_NTASKS": "2",
    "SLURM_PROCID": "1",
    "SLURM_STEPID": "0",
    "SLURM_STEP_ID": "0",
    "SLURM_STEP_NODELIST": "vm",
    "SLURM_STEP_NUM_NODES": "1",
    "SLURM_STEP_NUM_TASKS": "2",
    "SLURM_STEP_TASKS_PER_NODE": "2",
    "SLURM_TASKS_PER_NODE": "2",
}

#: The batch script's own process (no srun): SLURM_NTASKS is the allocation's, and no SLURM_STEP_ID.
SBATCH_SCRIPT = {
    "SLURMD_NODENAME": "vm",
    "SLURM_CPUS_ON_NODE": "2",
    "SLURM_GTIDS": "0",
    "SLURM_JOBID": "2",
    "SLURM_JOB_ID": "2",
    "SLURM_JOB_NAME": "job.sh",
    "SLURM_JOB_NODELIST": "vm",
    "SLURM_JOB_NUM_NODES": "1",
    "SLURM_LOCALID": "0",
    "SLURM_NNODES": "1",
    "SLURM_NODEID": "0",
    "SLURM_NODELIST": "vm",
    "SLURM_NPROCS": "2",
    "SLURM_NTASKS": "2",
    "SLURM_PROCID": "0",
    "SLURM_TASKS_PER_NODE": "2",
}

TORCHRUN_RANK_1 = {
    "GROUP_RANK": "0",
    "GROUP_WORLD_SIZE": "1",
    "LOCAL_RANK": "1",
    "LOCAL_WORLD_SIZE": "2",
    "MASTER_ADDR": "localhost",
    "MASTER_PORT": "43241",
    "RANK": "1",
    "ROLE_NAME": "default",
    "ROLE_RANK": "1",
    "ROLE_WORLD_SIZE": "2",
    "TORCHELASTIC_MAX_RESTARTS": "0",
    "TORCHELASTIC_RESTART_COUNT": "0",
    "TORCHELASTIC_RUN_ID": "ba9f7c67-f971-4006-8fbf-5bb72acd7144",
    "WORLD_SIZE": "2",
}

OPEN_MPI_RANK_1 = {
    "OMPI_APP_CTX_NUM_PROCS": "2",
    "OMPI_COMM_WORLD_LOCAL_RANK": "1",
    "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
    "OMPI_COMM_WORLD_NODE_RANK": "1",
    "OMPI_COMM_WORLD_RANK": "1",
    "OMPI_COMM_WORLD_SIZE": "2",
    "OMPI_MCA_ess_base_jobid": "854720513",
    "OMPI_MCA_ess_base_vpid": "1",
    "OMPI_UNIVERSE_SIZE": "2",
    "PMIX_HOSTNAME": "vm",
    "PMIX_NAMESPACE": "854720513",
    "PMIX_RANK": "1",
}

MPICH_RANK_1 = {
    "MPIR_CVAR_CH3_INTERFACE_HOSTNAME": "vm",
    "MPI_LOCALNRANKS": "2",
    "MPI_LOCALRANKID": "1",
    "PMI_FD": "8",
    "PMI_RANK": "1",
    "PMI_SIZE": "2",
}

#: jsrun's variables for rank 2 of 4, two per host (the rank file is written by the test).
LSF_RANK_2 = {
    "LSB_JOBID": "123456",
    "JSM_NAMESPACE_SIZE": "4",
    "JSM_NAMESPACE_RANK": "2",
    "JSM_NAMESPACE_LOCAL_RANK": "0",
}
LSF_RANKFILE = "batch01\nnode07\nnode07\nnode08\nnode08\n"

#: A PyTorchJob's worker replica 2 of 3.
KUBEFLOW_WORKER_2 = {
    "MASTER_ADDR": "job-master-0",
    "MASTER_PORT": "23456",
    "WORLD_SIZE": "3",
    "RANK": "2",
}
