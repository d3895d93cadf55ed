"""``debug.breakpoint``: an interactive prompt, when a program runs, over the Python frames
that traced it, with their arrays' values.

The frames are recorded when the breakpoint is traced; the arrays in their locals are
handed to a ``debug.callback``, so the prompt opens each time the program reaches that
point (per element under ``vmap``, on primal values under differentiation), with those
arrays as numpy values.
"""

import cmd
import inspect
import os
import pprint
import sys
import traceback
from typing import Any, Dict, List, Optional

from .array import Array
from .callbacks import debug_callback

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Frame:
    """A frame as the prompt shows it: where it stood and its variables."""

    def __init__(self, info: inspect.FrameInfo, variables: Dict[str, Any]):
        self.filename = info.filename
        self.lineno = info.lineno
        self.function = info.function
        self.globals = info.frame.f_globals
        self.variables = variables

    def where(self) -> str:
        return f'  File "{self.filename}", line {self.lineno}, in {self.function}'


class CliDebugger(cmd.Cmd):
    """The prompt (``(qdb)``): ``p``/``pp`` an expression in the current frame, ``up``/``u``
    and ``down``/``d`` between frames, ``list``/``l`` the source around the line,
    ``where``/``w`` the stack, ``continue``/``c`` to run on, ``quit``/``q`` to exit."""

    prompt = "(qdb) "

    def __init__(self, frames: List[_Frame], stdin=None, stdout=None):
        super().__init__(stdin=stdin or sys.stdin, stdout=stdout or sys.stdout)
        self.use_rawinput = False
        self.frames = frames
        self.at = 0
        self.intro = "Entering qdb:"

    def _print(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def _evaluate(self, expr: str):
        frame = self.frames[self.at]
        return eval(expr, frame.globals, dict(frame.variables))  # noqa: S307 - a debugger

    def default(self, line: str) -> None:
        self._print(f"*** unknown command {line.split()[0]!r}: help lists the commands")

    def emptyline(self) -> bool:
        return False

    def do_p(self, arg: str) -> None:
        """p expression: print its value in the current frame."""
        try:
            self._print(repr(self._evaluate(arg)))
        except Exception:
            self._print(traceback.format_exc(limit=0).strip())

    def do_pp(self, arg: str) -> None:
        """pp expression: pretty-print its value in the current frame."""
        try:
            self._print(pprint.pformat(self._evaluate(arg)))
        except Exception:
            self._print(traceback.format_exc(limit=0).strip())

    def do_up(self, _: str) -> None:
        """up: the caller's frame."""
        if self.at + 1 >= len(self.frames):
            self._print("*** at the oldest frame")
            return
        self.at += 1
        self._print(self.frames[self.at].where())

    do_u = do_up

    def do_down(self, _: str) -> None:
        """down: the frame it called."""
        if self.at == 0:
            self._print("*** at the newest frame")
            return
        self.at -= 1
        self._print(self.frames[self.at].where())

    do_d = do_down

    def do_list(self, _: str) -> None:
        """list: the source around the current line."""
        frame = self.frames[self.at]
        try:
            with open(frame.filename, encoding="utf-8") as f:
                lines = f.readlines()
        except OSError:
            self._print(f"*** no source for {frame.filename}")
            return
        first = max(frame.lineno - 6, 0)
        for n in range(first, min(frame.lineno + 5, len(lines))):
            mark = "->" if n + 1 == frame.lineno else "  "
            self._print(f"{n + 1:4d} {mark} {lines[n].rstrip()}")

    do_l = do_list

    def do_where(self, _: str) -> None:
        """where: the stack, oldest first, the current frame marked."""
        for k in reversed(range(len(self.frames))):
            self._print(("> " if k == self.at else "  ") + self.frames[k].where().strip())

    do_w = do_where

    def do_continue(self, _: str) -> bool:
        """continue: leave the prompt, the program runs on."""
        return True

    do_c = do_continue

    def do_quit(self, _: str) -> None:
        """quit: exit the process, as JAX's debugger does."""
        sys.exit(0)

    do_q = do_quit


def _internal(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE + os.sep)


def breakpoint(*, backend: Optional[str] = None, filter_frames: bool = True,  # noqa: A001
               num_frames: Optional[int] = None, ordered: bool = False, token=None,
               **kwargs) -> Any:
    """Opens a prompt at this point of the program each time it runs, as
    ``jax.debug.breakpoint``: the calling frames (Quabla's own left out with
    ``filter_frames``, at most ``num_frames``), their arrays as numpy values. Returns
    ``token`` unchanged. ``backend`` may be None or ``"cli"`` (the one debugger);
    ``ordered`` is always met, as for ``debug.callback``."""
    del kwargs
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: unknown debugger backend {backend!r}; Quabla "
                         "has 'cli'")
    stack = inspect.stack(0)[1:]  # no source lines read: `list` reads them when asked
    if filter_frames:
        stack = [f for f in stack if not _internal(f.filename)]
    if num_frames is not None:
        stack = stack[:num_frames]
    recorded = []
    arrays: List[Array] = []
    for info in stack:
        local = info.frame.f_locals
        names = [k for k, v in local.items() if isinstance(v, Array)]
        others = {k: v for k, v in local.items() if k not in names}
        recorded.append((info, others, names))
        arrays.extend(local[k] for k in names)
    del stack

    def enter(*values):
        it = iter(values)
        frames = [_Frame(info, {**others, **{k: next(it) for k in names}})
                  for info, others, names in recorded]
        CliDebugger(frames).cmdloop()

    debug_callback(enter, *arrays, ordered=ordered)
    return token


__all__ = ["breakpoint", "CliDebugger"]
