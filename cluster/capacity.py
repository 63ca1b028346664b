"""Where a cloud pool's nodes run and how they are bought: zone, market and reservation per pool
(the pool's `cloud` keys, else the cluster's), and the checks a reservation imposes.

A reservation holds one instance type in one zone: an ODCR or Capacity Block "can only" take
instances with "matching attributes (instance type, platform, Availability Zone, and tenancy)" and
"sufficient available capacity" (AWS EC2 User Guide, "Launch instances into an existing Capacity
Reservation", capacity-reservations-launch.html); AWS ParallelCluster refuses a compute resource
whose instance type or subnet zone differs from its reservation's, and more instances than it holds
(aws/aws-parallelcluster cli/src/pcluster/validators/ec2_validators.py, CapacityReservationValidator
and CapacityReservationSizeValidator, commit 451cc5320d5d8a9318075990ead7f76f74372f85). A Compute
Engine reservation likewise holds VMs of one machine type in one zone (cloud.google.com/compute/docs/
instances/reservations-overview). Offline the reservation itself cannot be read, so the stack file
may describe it (`reservation: {id, instance_type, zone, nodes}`); either way every pool that draws
on one reservation must agree on type and zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cluster import stackfile as sf
from cluster.clouds import cloud as cloud_target
from cluster.findings import Finding, Severity, schema
from cluster.spec import PoolCapacity, PoolSpec

NO_RESERVATION = "none"  # a pool's cloud.reservation that opts it out of the cluster's


def reservation_id(reservation: str | sf.Reservation | None) -> str | None:
    """The reservation's id or name, however the stack file gives it (None for `none`)."""
    if isinstance(reservation, sf.Reservation):
        return reservation.id
    return None if reservation == NO_RESERVATION else reservation


def pool_capacity(target: str, cloud: sf.Cloud, pool: sf.NodePool, path: str, arch: str) -> PoolCapacity:
    """The pool's zone, market, reservation and image, each from the pool's own `cloud` or the
    cluster's; the image else the provider's default for `arch` ("" when there is none)."""
    own = pool.cloud or sf.PoolCloud()
    given_image = own.image or cloud.image
    image = given_image or cloud_target(target).default_images.get(arch, "")
    zone, zone_path = (own.zone, f"{path}.cloud.zone") if own.zone is not None else (cloud.zone, "cloud.zone")
    market, market_path = ((own.market, f"{path}.cloud.market") if own.market is not None
                           else (cloud.market, "cloud.market"))
    reservation, reservation_path = ((own.reservation, f"{path}.cloud.reservation") if own.reservation is not None
                                     else (cloud.reservation, "cloud.reservation"))
    return PoolCapacity(zone=zone, market=market, reservation=reservation_id(reservation), zone_path=zone_path,
                        market_path=market_path, reservation_path=reservation_path, image=image,
                        default_image=given_image is None and bool(image))


def described(cloud: sf.Cloud, pool: sf.NodePool) -> sf.Reservation | None:
    """The reservation the pool draws on, when the stack file describes it (not a bare id)."""
    given = pool.cloud.reservation if pool.cloud is not None and pool.cloud.reservation is not None else cloud.reservation
    return given if isinstance(given, sf.Reservation) else None


def image_findings(target: str, cloud: sf.Cloud, pools: list[tuple[sf.NodePool, PoolSpec]],
                   arch: dict[str, str]) -> Iterator[Finding]:
    """Every pool boots an image of its type's architecture: an arm64 type without a default image
    needs one named, and one cluster-wide image cannot serve pools of two architectures."""
    shared = {arch[pool.name] for raw, pool in pools if raw.cloud is None or raw.cloud.image is None}
    for raw, pool in pools:
        assert pool.capacity is not None
        if not pool.capacity.image:
            yield schema(f"{pool.path}.cloud.image",
                         f"{pool.instance_type} is {arch[pool.name]} and {target} has no default {arch[pool.name]} GPU "
                         "image here", f"name an {arch[pool.name]} image with the NVIDIA driver and the fabric's stack in "
                         f"{pool.path}.cloud.image")
        elif cloud.image is not None and (raw.cloud is None or raw.cloud.image is None) and len(shared) > 1:
            yield schema(f"{pool.path}.cloud.image",
                         f"cloud.image {cloud.image} serves pools of two architectures ({', '.join(sorted(shared))}); "
                         "an image boots one", f"give pool {pool.name} its own image in {pool.path}.cloud.image")


def capacity_findings(target: str, cloud: sf.Cloud, pools: list[tuple[sf.NodePool, PoolSpec]]) -> Iterator[Finding]:
    """Every pool's market and reservation as the provider takes them, and every reservation
    against the pools that draw on it (one type, one zone, no more nodes than it holds)."""
    if cloud_target(target).capacity_unused is not None:
        yield from _unused(target, cloud, [raw for raw, _ in pools])
        return
    yield from zone_findings(target, cloud.region, {cloud.zone: "cloud.zone"} if cloud.zone else {})
    for raw, pool in pools:
        assert pool.capacity is not None
        if pool.capacity.zone_path != "cloud.zone" and pool.capacity.zone is not None:
            yield from zone_findings(target, cloud.region, {pool.capacity.zone: pool.capacity.zone_path})
        yield from _market(target, pool, pool.capacity)
        holds = described(cloud, raw)
        if holds is not None:
            yield from _against(holds, pool, pool.capacity)
    yield from _shared(cloud, pools)


def zone_findings(target: str, region: str, zones: dict[str, str]) -> Iterator[Finding]:
    """Each zone ({zone: its path}) is a zone of `region`."""
    suffix, form = cloud_target(target).zone_suffix, cloud_target(target).zone_form
    assert suffix is not None  # zones are checked only where they are used
    for zone, path in zones.items():
        if not re.fullmatch(re.escape(region) + suffix, zone):
            yield schema(path, f"{zone} is not a zone of region {region}: a {target} zone name is "
                         + form.format(region=region),
                         f"set {path} to a zone of {region} (or cloud.region to the zone's region)")


def _market(target: str, pool: PoolSpec, capacity: PoolCapacity) -> Iterator[Finding]:
    """The market as the provider takes it. A reservation holds On-Demand capacity: EC2 fills "On-Demand
    capacity" from unused Capacity Reservations (EC2 API, OnDemandCapacityReservationOptions) and bills
    them at the On-Demand rate, a Capacity Block has its own market type; Cluster Toolkit's A3 Ultra
    blueprint reads "if you have a reservation, keep RESERVATION_BOUND. IF you do NOT have a
    reservation, set this to SPOT" (examples/machine-learning/a3-ultragpu-8g/a3ultra-vm-deployment.yaml
    at 1047080375af). Spot with a reservation buys neither."""
    if capacity.market == "spot" and capacity.reservation is not None:
        path = capacity.market_path if capacity.market_path != "cloud.market" else capacity.reservation_path
        yield schema(path, f"market spot with reservation {capacity.reservation}: a reservation holds On-Demand "
                     "capacity, which Spot instances never use, so the group would bid for Spot capacity while the "
                     "reservation stays empty",
                     f"set {capacity.market_path} to on-demand to use the reservation, or take pool {pool.name} off it "
                     f"({pool.path}.cloud.reservation: none) to buy Spot")
    elif capacity.market == "capacity-block" and not cloud_target(target).capacity_blocks:
        yield schema(capacity.market_path, f"market capacity-block is an EC2 Capacity Block, which {target} does not "
                     "offer", "use on-demand with a reservation (cloud.reservation), or spot")
    elif capacity.market == "capacity-block" and capacity.reservation is None:
        yield schema(capacity.market_path, "market capacity-block needs reservation (the Capacity Block's "
                     "reservation id)", f"set {capacity.reservation_path} to the Capacity Block's id (cr-...)")


def _against(holds: sf.Reservation, pool: PoolSpec, capacity: PoolCapacity) -> Iterator[Finding]:
    """One pool against the reservation as the stack file describes it."""
    if holds.instance_type is not None and holds.instance_type != pool.instance_type:
        yield schema(f"{capacity.reservation_path}.instance_type",
                     f"reservation {holds.id} holds {holds.instance_type}; pool {pool.name} is {pool.instance_type}, "
                     "and a reservation takes only instances of its own type",
                     f"give pool {pool.name} its own reservation (node_pools[{pool.index}].cloud.reservation), or "
                     f"set its instance_type to {holds.instance_type}")
    if holds.zone is not None and capacity.zone is not None and holds.zone != capacity.zone:
        yield schema(f"{capacity.reservation_path}.zone",
                     f"reservation {holds.id} is in {holds.zone}; pool {pool.name} is in {capacity.zone}, and a "
                     "reservation takes only instances in its own zone",
                     f"set node_pools[{pool.index}].cloud.zone to {holds.zone}, or use a reservation in "
                     f"{capacity.zone}")


def _shared(cloud: sf.Cloud, pools: list[tuple[sf.NodePool, PoolSpec]]) -> Iterator[Finding]:
    """Pools that draw on one reservation: one instance type, one zone, and no more nodes than a
    described reservation holds."""
    by_reservation: dict[str, list[PoolSpec]] = {}
    holds: dict[str, sf.Reservation] = {}
    for raw, pool in pools:
        assert pool.capacity is not None
        if pool.capacity.reservation is None:
            continue
        by_reservation.setdefault(pool.capacity.reservation, []).append(pool)
        description = described(cloud, raw)
        if description is not None:
            holds.setdefault(description.id, description)
    for reservation, sharing in by_reservation.items():
        first = sharing[0]
        assert first.capacity is not None
        for other in sharing[1:]:
            assert other.capacity is not None
            if other.instance_type != first.instance_type:
                yield schema(other.capacity.reservation_path,
                             f"pools {first.name} ({first.instance_type}) and {other.name} ({other.instance_type}) draw "
                             f"on one reservation, {reservation}; a reservation holds one instance type, so one of "
                             "them cannot launch",
                             f"give pool {other.name} the reservation of its own type in "
                             f"node_pools[{other.index}].cloud.reservation")
            elif other.capacity.zone != first.capacity.zone:
                yield schema(other.capacity.zone_path,
                             f"pools {first.name} ({first.capacity.zone}) and {other.name} ({other.capacity.zone}) draw "
                             f"on one reservation, {reservation}; a reservation is in one zone",
                             f"put pool {other.name} in {first.capacity.zone}, or give it a reservation in "
                             f"{other.capacity.zone}")
        nodes = sum(pool.nodes for pool in sharing)
        description = holds.get(reservation)
        if description is not None and description.nodes is not None and nodes > description.nodes:
            names = ", ".join(f"{pool.name} ({pool.nodes})" for pool in sharing)
            yield schema(sharing[-1].capacity.reservation_path if sharing[-1].capacity else "cloud.reservation",
                         f"reservation {reservation} holds {description.nodes} instances; the pools that draw on it "
                         f"ask for {nodes}: {names}",
                         f"lower the pools' nodes to {description.nodes} in all, or extend the reservation")


def _unused(target: str, cloud: sf.Cloud, pools: list[sf.NodePool]) -> Iterator[Finding]:
    """Azure takes no reservation, market or zone from the stack file: say so rather than ignore it."""
    settings = [("cloud", cloud.reservation is not None, cloud.market != "on-demand", cloud.zone is not None)]
    settings += [(f"node_pools[{index}].cloud", pool.cloud.reservation is not None, pool.cloud.market is not None,
                  pool.cloud.zone is not None)
                 for index, pool in enumerate(pools) if pool.cloud is not None]
    for prefix, reservation, market, zone in settings:
        for key, given in (("reservation", reservation), ("market", market), ("zone", zone)):
            if given:
                yield Finding("SPEC-IGNORED", Severity.WARNING, f"{prefix}.{key}",
                              f"{key} is not used on {target}: {cloud_target(target).capacity_unused}", f"remove {prefix}.{key}")
