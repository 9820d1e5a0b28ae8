"""The PTS DIRTH test (demand intensity / response-time histogram): RND 8 KiB R/W
65/35 to steady state at the largest TC x QD, then the demand-intensity sweep
(:mod:`.demand`); its report picks the MaxIOPS, MidIOPS and MinIOPS points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from volbench.plans.pts.demand import DemandTest

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

DIRTH_GRID = (32, 16, 8, 6, 4, 2, 1)
DIRTH_BS = 8192
DIRTH_READ_PCT = 65


@dataclass(frozen=True)
class Dirth(DemandTest):
    name: str = "dirth"
    full_grid: tuple[int, ...] = DIRTH_GRID

    def shape(self, options: PtsOptions) -> dict[str, object]:
        return {"bs_bytes": DIRTH_BS, "rwmixread_pct": DIRTH_READ_PCT}


DIRTH = Dirth()
