"""`benign list | run | book`: the companion's notebooks from the command line.

Bad input (an unknown notebook, profile or setting, a value of the wrong type or range, settings that cannot run
together, an output folder that cannot be written or holds another notebook's results) prints one line and exits
with code 2; nothing already in --out is touched. Ctrl-C stops the work within a second or two, keeps what
finished (sweep chunks, fine-tuning runs), prints one line and exits with code 130.
"""

from __future__ import annotations

import argparse
import os
import sys

from .checks import ParameterError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, no usage dump
        print(f"benign: error: {message} (see benign --help)", file=sys.stderr)
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="benign", description="Run the companion's notebooks and build its book.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="the notebooks, their settings and defaults")
    run = sub.add_parser("run", help="execute a notebook headless (papermill)")
    run.add_argument("notebook")
    run.add_argument("--profile", default="book", help="smoke, book (default) or paper")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    run.add_argument("--out", default=None, help="output folder (default results/<notebook>/<profile>): empty or "
                     "this notebook's own results")
    run.add_argument("--force", action="store_true", help="replace whatever --out holds")
    book = sub.add_parser("book", help="execute every notebook and build the Jupyter Book")
    book.add_argument("--profile", default="book", help="smoke, book (default) or paper")
    book.add_argument("--output", default=None, help="folder to put _build/html in (default: the repository)")
    book.add_argument("--jobs", type=int, default=None, help="notebooks run side by side, at least 1 (default: one "
                      "per core, at most 4)")
    return parser


def _list() -> None:
    from . import notebooks

    for name in notebooks.names():
        params = " ".join(f"{k}={v!r}" for k, v in notebooks.defaults(name).items())
        print(f"{name}  — {notebooks.title(name)}\n    {params}")
    sys.stdout.flush()  # here, where a closed pipe is met (`main`), not at the interpreter's exit


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        if args.command == "list":
            _list()
        elif args.command == "run":
            from . import notebooks

            overrides = {}
            for pname, value in args.parameter:
                if pname in overrides:
                    raise ParameterError(f"parameter {pname!r} given twice: give each -p NAME VALUE once")
                overrides[pname] = value
            if "out_dir" in overrides:
                raise ParameterError("out_dir is not a parameter of benign run: give the output folder as --out FOLDER")
            notebooks.resolve(args.notebook, args.profile, overrides)  # fail fast, before any kernel starts
            out = notebooks.run(args.notebook, args.profile, overrides, args.out, force=args.force)
            print(f"wrote {out}")
        elif args.command == "book":
            from . import book

            if args.jobs is not None and args.jobs < 1:
                raise ParameterError(f"--jobs {args.jobs} is not allowed: give 1 or more (default: one per core)")
            built = book.build(args.profile, args.output, args.jobs or 0)
            print(f"built {built / 'html' / 'index.html'}")
    except KeyboardInterrupt as err:
        print(f"benign: {err or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `benign list | head`: the reader stopped reading, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is left unflushed goes nowhere
        return 141
    except ParameterError as err:
        print(f"benign: error: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"benign: error: {err}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as err:  # a light install: the trainers alone, without the notebooks' stack
        print(f"benign: error: benign {args.command} needs the book extra ({err.name} is not installed): "
              "pip install 'benign[book]'", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
