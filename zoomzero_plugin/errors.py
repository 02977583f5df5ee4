"""Typed errors: what a user did wrong, raised by library code and turned into one line at a CLI's edge.

Library functions raise a :class:`ZoomzeroError` subclass whose message names the thing (argument, file and
line, row id, model path) and the fix; they never print or exit. Every command line (``zoomzero``, ``easyr1``
and the module entry points such as ``python -m zoomzero_plugin.eval.runner``) runs through :func:`cli_edge`:
these errors become ``prog: message`` on stderr with :data:`EXIT_USER`, and a reader that stopped reading
(``zoomzero … | head -1``) ends the command quietly with :data:`EXIT_PIPE`. Anything else is a bug in this
package or a library, and keeps its traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

EXIT_USER = 2  # a user mistake (argument, file, data, model); the message says what to change
EXIT_PIPE = 141  # stdout's reader went away (128 + SIGPIPE, what a shell reports for tools it killed so)


class ZoomzeroError(Exception):
    """Base: a problem the user can fix. ``str(error)`` is the whole message, one line where possible."""


class UsageError(ZoomzeroError, ValueError):
    """A bad command-line argument or option value (or a combination of them)."""


class DataError(ZoomzeroError, ValueError):
    """A data file or row is malformed, inconsistent or missing; the message names file:line or the row id."""


class VideoError(DataError):
    """A video is missing, empty, truncated or cannot be decoded; the message names the file."""


class ModelError(ZoomzeroError):
    """A model or processor cannot be loaded (missing path, unreachable hub id, unsupported architecture)."""


class ResumeError(ZoomzeroError):
    """An output directory holds earlier results that cannot be resumed with these settings."""


class ConfigError(ZoomzeroError, ValueError):
    """A recipe or option section is invalid (unknown key, wrong type, contradictory settings)."""


class DependencyError(ZoomzeroError, ImportError):
    """An optional dependency (vLLM, EasyR1, LLaMA-Factory) is missing or of an unsupported version."""


def one_line(prog: str, error: BaseException) -> str:
    """``prog: message`` for the user; the message's own lines are kept (a problem list stays a list)."""
    return f"{prog}: {str(error).strip() or type(error).__name__}"


def _stdout_closed() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (poll reports an error on it)."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, or no real stdout: cannot tell, keep the traceback
        return False


def cli_edge(prog: str | Callable[[], str], command: Callable[[], int | None]) -> int:
    """Run a command line's work and return its exit status. A :class:`ZoomzeroError` is printed as one line
    (``prog``: the program's name, or a function giving it once the arguments are parsed) with
    :data:`EXIT_USER`; a closed stdout (the reader of a pipe exited) ends it with :data:`EXIT_PIPE` and no
    traceback. stdout is flushed here, so a closed pipe is met here and not at interpreter exit."""
    try:
        try:
            return int(command() or 0)
        finally:
            sys.stdout.flush()
    except ZoomzeroError as e:
        print(one_line(prog() if callable(prog) else prog, e), file=sys.stderr)
        return EXIT_USER
    except BrokenPipeError:
        if not _stdout_closed():  # a socket or another pipe of the command's own: a real failure
            raise
        # Python's documented way out: stdout now writes nowhere, so the interpreter's last flush cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE


def format_problems(problems: Sequence[str], config: str) -> str:
    """A :class:`ConfigError` message: a count of the problems with ``config`` (what was checked), one per line."""
    return "\n".join([f"{len(problems)} problem(s) with {config}:", *(f"  - {p}" for p in problems)])
