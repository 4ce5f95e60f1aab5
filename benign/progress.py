"""Progress of long work (gradient-descent steps, sweep chunks, training epochs): shown where a person watches.

Bars are off unless a notebook's `progress` parameter turns them on. `benign run` in a terminal turns them on and
names the terminal in $BENIGN_PROGRESS_TTY (the kernel runs in a session of its own, without /dev/tty), so the
kernel draws them there instead of into the notebook's outputs: a rendered page never shows bar noise. In
Jupyter, `progress = True` draws a plain text bar in the cell.
"""

from __future__ import annotations

import contextlib
import functools
import os

TTY_ENV = "BENIGN_PROGRESS_TTY"


def iterate(iterable, total: int, desc: str, enabled: bool):
    """`iterable`, with a bar of `total` steps when `enabled`."""
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, **_where())


def bar(total: int, desc: str, enabled: bool, initial: int = 0):
    """A bar to `update()` and `close()` by hand (a do-nothing one when not `enabled`)."""
    if not enabled:
        return _Off()
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, **_where())


def terminal_name() -> str | None:
    """The terminal this process writes its errors to, if any (for $BENIGN_PROGRESS_TTY)."""
    with contextlib.suppress(OSError, ValueError):
        return os.ttyname(2) if os.isatty(2) else None
    return None


def _where() -> dict:
    terminal = _terminal(os.environ.get(TTY_ENV, ""))
    if terminal is None:
        return {"leave": False}
    return {"file": terminal, "position": 1, "leave": False}  # one line below papermill's bar of cells


@functools.cache
def _terminal(name: str):
    """The named terminal, opened once per process (None when there is none)."""
    if name:
        with contextlib.suppress(OSError):
            return open(name, "w")
    return None


class _Off:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass
