"""How soon a loop that looks for work looks again.

Some loops poll although they are told of new work (a PostgreSQL NOTIFY, a feed
event, a write in this process), because a notice can be missed or a retry comes
due later. Looking every second while nothing happens is wasted work, on both
sides of the query. :class:`IdleBackoff` paces such a loop: it looks again
``first`` seconds after a look that found work, doubles the pause after each
look that found none, up to ``longest``, and :meth:`IdleBackoff.wake` ends a
pause at once (a notice: look now, and soon again after that).
"""

from __future__ import annotations

import asyncio


class IdleBackoff:
    def __init__(self, first: float, longest: float) -> None:
        if not 0 < first <= longest:
            raise ValueError("an idle backoff needs 0 < first <= longest")
        self.first = first
        self.longest = longest
        self.next_pause = first
        self._woken = asyncio.Event()

    def wake(self) -> None:
        """Something happened: the pause in progress (or the next one) ends at once."""
        self._woken.set()

    async def pause(self, *, busy: bool) -> bool:
        """Wait before the next look; ``busy``: the last one found work (or failed, and
        should be tried again soon). Whether the pause was ended by :meth:`wake`."""
        if busy:
            self.next_pause = self.first
        try:
            await asyncio.wait_for(self._woken.wait(), self.next_pause)
        except TimeoutError:
            self.next_pause = min(self.longest, self.next_pause * 2)
            return False
        self._woken.clear()
        self.next_pause = self.first
        return True
