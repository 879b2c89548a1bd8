"""The bulk index's pace: every core while the person is away, one thread while they type."""

from __future__ import annotations

import time

from palinode_vault.index.worker import Pace


def test_typing_means_one_thread_and_away_means_every_core():
    typed: list[float | None] = [time.time()]
    pace = Pace(lambda: typed[0], cores=4, idle_seconds=60, busy=lambda threads: False)
    assert pace() == 1 and "typing" in pace.why
    typed[0] = time.time() - 120
    assert pace() == 4 and "idle" in pace.why
    typed[0] = None  # no editor connected
    assert pace() == 4
    typed[0] = time.time()
    assert pace() == 1


def test_a_busy_machine_means_one_thread():
    pace = Pace(lambda: None, cores=4, busy=lambda threads: True)
    assert pace() == 1 and "busy" in pace.why
