"""Hand a cluster environment's answers to torch: the variables ``init_process_group`` reads.

torch's ``env://`` rendezvous (what the DDP and FSDP strategies use) reads ``MASTER_ADDR``,
``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK``; the launchers torch ships set them, a scheduler does
not (``srun`` sets ``SLURM_PROCID``, ``mpirun`` ``OMPI_COMM_WORLD_RANK``, ...). Writing the
environment's answers under torch's names before the process group is made lets one code path serve
every environment, and processes this one starts later (data loader workers, a logger's helper)
see the same ranks. Lightning exports ``MASTER_ADDR``/``MASTER_PORT`` the same way and passes the
ranks to ``init_process_group``; here they go through the environment too.
"""

from __future__ import annotations

import os

from .base import ClusterEnvironment

__all__ = ["export_rendezvous", "rendezvous_variables"]


def rendezvous_variables(environment: ClusterEnvironment) -> dict[str, str]:
    """torch's variables as ``environment`` answers them; raises on the first bad scheduler variable."""
    facts = environment.facts()
    return {
        "MASTER_ADDR": facts.main_address,
        "MASTER_PORT": str(facts.main_port),
        "WORLD_SIZE": str(facts.world_size),
        "RANK": str(facts.global_rank),
        "LOCAL_RANK": str(facts.local_rank),
        "NODE_RANK": str(facts.node_rank),
    }


def export_rendezvous(environment: ClusterEnvironment) -> dict[str, str]:
    """Set torch's variables from ``environment`` in this process (and its future children); what was set."""
    variables = rendezvous_variables(environment)
    os.environ.update(variables)
    return variables
