"""A deadline whose fewest cards every row already sells shares the layout of the counts sold.

``sold_already`` lets a deadline request reuse ``SoldCounts``'s layout: only right when the candidates
it would add (each row's fewest cards meeting the deadline) are all there already.
"""

from __future__ import annotations

import numpy as np

from service.quote.jobs.batch import plan_candidates, sold_already
from tests.quote.seeded import catalog


def test_sold_fewest_cards_add_no_candidate_and_unsold_ones_do() -> None:
    tables = catalog(5, 240).tables
    rng = np.random.default_rng(5)
    counts = np.asarray(tables.plan_counts)
    shared_counts, shared = plan_candidates(tables, (1,), 512, None)
    said = {True: 0, False: 0}
    for _ in range(200):
        deadline_cards = np.zeros((2, tables.size), dtype=np.int64)
        for bound in range(2):
            for row in rng.choice(tables.size, size=20, replace=False):
                sold = counts[tables.sells[:, row]]
                # Mostly a count the row sells; now and then one it does not (or one past the cap).
                pick = rng.random()
                cards = int(rng.choice(sold)) if pick < 0.97 else int(rng.integers(2, 2048))
                deadline_cards[bound, row] = cards
        counts_with, with_deadline = plan_candidates(tables, (1,), 512, deadline_cards)
        same = counts_with == shared_counts and np.array_equal(with_deadline, shared)
        assert sold_already(tables, 512, deadline_cards) == same
        said[same] += 1
    assert said[True] > 10 and said[False] > 10
    assert sold_already(tables, 512, np.zeros((2, tables.size), dtype=np.int64))
