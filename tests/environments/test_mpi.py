"""MPIEnvironment: Open MPI's and Hydra's (MPICH, Intel MPI) variables, no mpi4py."""

from __future__ import annotations

import re

import pytest

from accelplug.environments import MPIEnvironment
from accelplug.errors import MisconfigurationException

from .captured import MPICH_RANK_1, OPEN_MPI_RANK_1
from .conftest import Launch, ask


@pytest.mark.parametrize("variables", [OPEN_MPI_RANK_1, MPICH_RANK_1], ids=["open-mpi", "mpich"])
def test_a_process_mpirun_started_is_detected_with_its_place(launched: Launch, variables: dict[str, str]) -> None:
    launched(variables)
    assert MPIEnvironment.detect()
    env = MPIEnvironment()
    assert env.creates_processes_externally
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (2, 1, 1, 0)
    assert env.main_address == "127.0.0.1"  # every process on this node


def test_open_mpi_ranks_derive_one_port_from_the_job_id(launched: Launch) -> None:
    launched(OPEN_MPI_RANK_1)
    port = MPIEnvironment().main_port
    launched(OMPI_COMM_WORLD_RANK="0", OMPI_COMM_WORLD_LOCAL_RANK="0")
    assert MPIEnvironment().main_port == port
    assert 15000 <= port < 25000
    launched(OMPI_MCA_ess_base_jobid="854720514")  # another job, another port
    assert MPIEnvironment().main_port != port


def test_hydra_has_no_job_id_so_the_port_is_torchs_default_unless_set(launched: Launch) -> None:
    launched(MPICH_RANK_1)
    assert MPIEnvironment().main_port == 29500
    launched(MASTER_PORT="29999")
    assert MPIEnvironment().main_port == 29999


def test_mpirun_with_one_process_is_left_to_the_trainer(launched: Launch) -> None:
    launched(OPEN_MPI_RANK_1, OMPI_COMM_WORLD_SIZE="1", OMPI_COMM_WORLD_RANK="0", OMPI_COMM_WORLD_LOCAL_SIZE="1")
    assert not MPIEnvironment.detect()


def test_several_nodes_need_master_addr(launched: Launch) -> None:
    launched(MPICH_RANK_1, PMI_SIZE="4", PMI_RANK="3")  # rank 3 of 4, two per node
    env = MPIEnvironment()
    assert env.node_rank() == 1
    with pytest.raises(MisconfigurationException, match=r"set MASTER_ADDR for every process \(`mpirun -x"):
        _ = env.main_address
    launched(MASTER_ADDR="node07")
    assert env.main_address == "node07"


def test_ranks_placed_round_robin_over_nodes_need_node_rank(launched: Launch) -> None:
    launched(OPEN_MPI_RANK_1, OMPI_COMM_WORLD_SIZE="4", OMPI_COMM_WORLD_RANK="1", OMPI_COMM_WORLD_LOCAL_RANK="0")
    env = MPIEnvironment()  # `--map-by node`: rank 1 is the first process of the second node
    with pytest.raises(MisconfigurationException, match="were not placed node by node"):
        env.node_rank()
    launched(NODE_RANK="1")
    assert env.node_rank() == 1


@pytest.mark.parametrize(
    ("changes", "answer", "message"),
    [
        ({"PMI_RANK": "2"}, "global_rank", "PMI_RANK=2 contradicts PMI_SIZE=2"),
        ({"MPI_LOCALNRANKS": "3"}, "local_size", "MPI_LOCALNRANKS=3 contradicts PMI_SIZE=2"),
        ({"MPI_LOCALRANKID": "2"}, "local_rank", "MPI_LOCALRANKID=2 contradicts MPI_LOCALNRANKS=2"),
        ({"MPI_LOCALRANKID": None}, "local_rank", "MPI_LOCALRANKID is not set. MPICH/Intel MPI (Hydra)'s launcher"),
        ({"PMI_SIZE": "many"}, "world_size", "PMI_SIZE='many' is not a whole number"),
    ],
)
def test_a_bad_variable_is_named_with_its_value(
    launched: Launch, changes: dict[str, str | None], answer: str, message: str
) -> None:
    launched(MPICH_RANK_1, **changes)
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        ask(MPIEnvironment(), answer)


def test_asked_without_any_launcher_it_names_the_variables_it_looked_for() -> None:
    with pytest.raises(MisconfigurationException, match="looked for OMPI_COMM_WORLD_SIZE, PMI_SIZE"):
        MPIEnvironment().world_size()
