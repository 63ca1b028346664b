"""The copy from stack file to spec has one home, `Spec.from_stack`: a field a spec shares by name
with its stack-file model is copied as given there, unless the spec lists it in `resolved` with
why; cluster/resolve.py passes only what it decides."""

from __future__ import annotations

import ast
import copy
from typing import Any

import pytest
from pydantic import BaseModel

from cluster import spec as specs
from cluster import stackfile as sf
from cluster.findings import Severity
from cluster.resolve import resolve
from cluster.spec import ClusterSpec, NetworkSpec, PolicySpec, PoolSpec, Spec
from tests.conftest import ROOT
from tests.hostile_bases import CLOUD, ONPREM

RESOLVED_FROM_STACK = [model for model in vars(specs).values()
                       if isinstance(model, type) and issubclass(model, Spec) and model.given_as is not None]


def _shared(model: type[Spec]) -> set[str]:
    """The fields `model` has by name in its stack-file model or a subclass of it (StorageNetwork)."""
    assert model.given_as is not None
    given = {model.given_as, *model.given_as.__subclasses__()}
    return {name for name in model.model_fields if any(name in other.model_fields for other in given)}


def _resolved(data: dict[str, Any]) -> ClusterSpec:
    spec, findings = resolve(copy.deepcopy(data), ("FAB-LINK-SPEED",))
    assert spec is not None, [str(finding) for finding in findings]
    return spec


def _as_given(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def test_the_specs_built_from_a_stack_file_model() -> None:
    assert {model.__name__ for model in RESOLVED_FROM_STACK} == {
        "PoolSpec", "FabricSpec", "NetworkSpec", "PolicySpec", "ClusterSpec"}


@pytest.mark.parametrize("model", RESOLVED_FROM_STACK, ids=lambda model: model.__name__)
def test_every_resolved_field_is_shared_and_says_why(model: type[Spec]) -> None:
    assert set(model.resolved) <= _shared(model)
    assert all(why.strip() for why in model.resolved.values())
    assert model.copied(model.given_as or sf.Model), "a spec that copies nothing needs no from_stack"


def _spec_calls(tree: ast.AST) -> list[ast.Call]:
    names = {model.__name__ for model in RESOLVED_FROM_STACK}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id in names)
        or (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names))]


def test_the_resolver_spells_out_no_copied_field() -> None:
    """resolve.py builds these specs only through from_stack, and passes none of the fields it copies."""
    tree = ast.parse((ROOT / "cluster" / "resolve.py").read_text())
    calls = _spec_calls(tree)
    by_name = {model.__name__: model for model in RESOLVED_FROM_STACK}
    assert calls
    for call in calls:
        assert isinstance(call.func, ast.Attribute) and call.func.attr == "from_stack", ast.unparse(call)
        assert isinstance(call.func.value, ast.Name)
        model = by_name[call.func.value.id]
        copied = set(_shared(model)) - set(model.resolved)
        assert {keyword.arg for keyword in call.keywords} & copied == set(), ast.unparse(call)


def _copied_as_given(spec: BaseModel, given: sf.Model) -> dict[str, tuple[object, object]]:
    """The copied fields whose value in `spec` is not the stack file's."""
    assert isinstance(spec, Spec)
    return {name: (getattr(spec, name), getattr(given, name)) for name in type(spec).copied(type(given))
            if _as_given(getattr(spec, name)) != getattr(given, name)}


def test_an_on_premises_spec_carries_every_copied_field_as_given() -> None:
    raw = sf.StackFile.model_validate(copy.deepcopy(ONPREM))
    spec = _resolved(ONPREM)
    assert _copied_as_given(spec, raw) == {}
    assert _copied_as_given(spec.policy, raw.policy) == {}
    assert spec.fabric is not None and raw.fabric is not None
    assert _copied_as_given(spec.fabric, raw.fabric) == {}
    for name in ("storage", "management", "oob"):
        network, given = getattr(spec, name), getattr(raw, name)
        assert isinstance(network, NetworkSpec) and given is not None
        assert _copied_as_given(network, given) == {}, name
    assert spec.storage is not None and "lossless" in NetworkSpec.copied(sf.StorageNetwork)
    for pool, given_pool in zip(spec.pools, raw.node_pools, strict=True):
        assert given_pool.instance_type is None and not given_pool.previous_names  # ignored on premises
        assert _copied_as_given(pool, given_pool) == {}


def test_a_cloud_spec_carries_every_copied_field_as_given() -> None:
    data = copy.deepcopy(CLOUD)
    data["previous_names"] = ["old-cloud"]
    data["node_pools"][0]["previous_names"] = ["p5e-old"]
    raw = sf.StackFile.model_validate(data)
    spec = _resolved(data)
    assert _copied_as_given(spec, raw) == {}
    assert _copied_as_given(spec.policy, raw.policy) == {}
    assert spec.pools[0].previous_names == ("p5e-old",) and spec.previous_names == ("old-cloud",)
    assert _copied_as_given(spec.pools[0], raw.node_pools[0]) == {}


@pytest.mark.parametrize(("data", "where", "key", "left"), [
    (ONPREM | {"previous_names": []}, ("node_pools", 0), "previous_names", ()),
    (CLOUD, ("node_pools", 0), "address_block", None),
    (CLOUD, (), "provisioning", None),
], ids=["pool-renames-on-premises", "address-block-on-cloud", "provisioning-on-cloud"])
def test_a_key_ignored_on_its_target_is_left_at_the_default(
        data: dict[str, Any], where: tuple[str | int, ...], key: str, left: object) -> None:
    given = {"previous_names": ["older"], "address_block": 3,
             "provisioning": {"dhcp_server": "10.0.0.5"}}[key]
    data = copy.deepcopy(data)
    place: Any = data
    for step in where:
        place = place[step]
    place[key] = given
    spec: Any = _resolved(data)
    for step in where:
        spec = spec.pools if step == "node_pools" else spec[step] if isinstance(step, int) else getattr(spec, step)
    assert getattr(spec, key) == left


def test_from_stack_refuses_a_copied_field_the_resolver_passes() -> None:
    policy = sf.Policy()
    with pytest.raises(TypeError, match="min_gbps_per_gpu are copied from the stack file"):
        PolicySpec.from_stack(policy, fail_on=Severity.ERROR, min_gbps_per_gpu=1)
    with pytest.raises(TypeError, match="fail_on are not copied"):
        PolicySpec.from_stack(policy, ignored=("fail_on",), fail_on=Severity.ERROR)
    with pytest.raises(TypeError, match="PoolSpec is not resolved from a Policy"):
        PoolSpec.from_stack(policy)
    with pytest.raises(TypeError, match="name have no default"):
        PoolSpec.from_stack(sf.NodePool(name="a", nodes=1), ignored=("name",))
    assert PolicySpec.from_stack(policy, fail_on=Severity.WARNING).suppress == ()
