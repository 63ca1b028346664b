"""Collective and training-step estimates on a design (issue 9).

model.py holds the formulas, placement.py where nodes land and what the uplinks give them,
calibration.yaml the constants with their sources, step.py a training step's communication.
"""

from cluster.estimate.design import collective_on, estimate_table, pick_pool

__all__ = ["collective_on", "estimate_table", "pick_pool"]
