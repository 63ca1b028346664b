"""Which slice `lab up` proposes: the largest candidate that fits this machine's memory and CPU,
naming the limit that bound it. Fixed needs and machines; no timing."""

from __future__ import annotations

import argparse

import pytest

from cluster.commands import lab as lab_command
from cluster.lab.model import Slice
from cluster.lab.sizing import CPU_SHARE, SESSION_CORES, SWITCH_CORES, Machine, Need, choose
from cluster.pipeline import Valid, validate

# The candidates `lab up article-c` weighs: all of it (28 switches, 1,024 fabric session ends), then one leaf group.
ARTICLE_C = [Need(Slice(), 28, 1024, 64), Need(Slice(1), 19, 512, 32)]


def test_cores_follow_the_measured_cost_of_switches_and_bfd_sessions() -> None:
    need = ARTICLE_C[0]
    assert need.cores == 28 * SWITCH_CORES + 1024 * SESSION_CORES
    assert 1.6 < need.cores < 1.75  # article-c's daemons took 1.66 cores, idle, on the reference machine


def test_a_design_that_fits_both_runs_whole() -> None:
    sized = choose(ARTICLE_C, Machine(available_mb=17_000, cores=8))
    assert sized.need.slice == Slice() and sized.bound_by == ()
    assert sized.fits_cpu and sized.fits_memory
    assert sized.describe().startswith("slice all fits this machine")


def test_two_cores_bind_article_c_to_one_leaf_group_by_cpu() -> None:
    sized = choose(ARTICLE_C, Machine(available_mb=17_000, cores=2))
    assert sized.need.slice == Slice(1) and sized.bound_by == ("CPU",)
    assert sized.need.cores <= 2 * CPU_SHARE < ARTICLE_C[0].cores
    assert "bound by CPU" in sized.describe()
    assert sized.to_dict()["bound_by"] == ["CPU"]


def test_little_memory_binds_by_memory_and_both_are_named_when_both_bind() -> None:
    by_memory = choose(ARTICLE_C, Machine(available_mb=2_400, cores=8))  # a lab gets 1,800 MB
    assert by_memory.need.slice == Slice(1) and by_memory.bound_by == ("memory",)
    both = choose(ARTICLE_C, Machine(available_mb=2_400, cores=2))
    assert both.need.slice == Slice(1) and both.bound_by == ("memory", "CPU")
    assert "bound by memory and CPU" in both.describe()


def test_when_nothing_fits_the_smallest_is_proposed_and_says_what_it_lacks() -> None:
    sized = choose(ARTICLE_C, Machine(available_mb=17_000, cores=1))
    assert sized.need.slice == Slice(1) and not sized.fits_cpu and sized.fits_memory
    assert "needs more CPU than this machine gives a lab" in sized.describe()
    starved = choose(ARTICLE_C, Machine(available_mb=1_000, cores=8))
    assert starved.need.slice == Slice(1) and not starved.fits_memory  # `lab up` refuses it with the numbers


def test_an_explicit_slice_is_the_only_candidate() -> None:
    sized = choose([ARTICLE_C[0]], Machine(available_mb=17_000, cores=2))
    assert sized.need.slice == Slice() and sized.bound_by == () and not sized.fits_cpu
    assert "BFD sessions may flap" in sized.describe()


def test_lab_up_weighs_the_design_s_switches_sessions_and_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """article-c on a 2-core machine with room in memory: one leaf group, bound by CPU; with 8 cores all of it."""
    result = validate("article-c")
    assert isinstance(result, Valid)
    monkeypatch.setattr(lab_command, "_available_mb", lambda: 17_000.0)
    monkeypatch.setattr(lab_command.os, "sched_getaffinity", lambda _: {0, 1})
    sized = lab_command._fitting_slice(argparse.Namespace(slice=None), result)
    assert (sized.need.slice, sized.bound_by, sized.need.switches, sized.need.hosts) == (Slice(1), ("CPU",), 19, 32)
    monkeypatch.setattr(lab_command.os, "sched_getaffinity", lambda _: set(range(8)))
    sized = lab_command._fitting_slice(argparse.Namespace(slice=None), result)
    assert (sized.need.slice, sized.bound_by, sized.need.switches, sized.need.session_ends) == (Slice(), (), 28, 1024)
    explicit = lab_command._fitting_slice(argparse.Namespace(slice="all"), result)
    assert explicit.need.slice == Slice() and explicit.bound_by == ()
