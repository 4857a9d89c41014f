"""Job kinds: what a job is, how its time grows with cards, and the candidates it is quoted at.

``base`` has the interface (``JobKind``, ``Candidates``, ``SpeedupRule``); one module per kind;
``JOB_KINDS`` maps ``workload.kind`` to its kind.
"""

from __future__ import annotations

from collections.abc import Mapping

from schemas.quote import WorkloadKind
from service.quote.jobs.base import (
    ArrayKey,
    AskedFor,
    CandidateRows,
    Candidates,
    CurveSpeedups,
    Job,
    JobKind,
    LayoutInputs,
    ModelSize,
    RowsAt,
    SpeedupRule,
)
from service.quote.jobs.batch import BatchJob
from service.quote.jobs.independent import IndependentJob
from service.quote.jobs.serving import ServingJob

__all__ = [
    "JOB_KINDS",
    "ArrayKey",
    "AskedFor",
    "CandidateRows",
    "Candidates",
    "CurveSpeedups",
    "Job",
    "JobKind",
    "LayoutInputs",
    "ModelSize",
    "RowsAt",
    "SpeedupRule",
]

JOB_KINDS: Mapping[WorkloadKind, JobKind] = {
    kind.kind: kind for kind in (BatchJob(), IndependentJob(), ServingJob())
}
