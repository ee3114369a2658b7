"""The command line's parser: the standard library's ``argparse``, one parser with a subparser per command.

argparse starts in about 2 ms where typer (and the click it bundles) took 30-40 ms of every run (issue #28).
What argparse does differently from the conventions users rely on is settled here, once:

- a usage error is one line (:class:`threadfix.errors.UsageError`, which :func:`threadfix.cli.main` prints with
  ``threadfix: error:`` and exit 2), never argparse's usage block and ``prog: error:``;
- options and paths mix in any order (``lint a.jsonl --select TF0 b.jsonl``), and an option's value may start
  with a dash (``--min-age -5m`` is refused as a negative duration, not as an unknown option ``-5m``);
- prefixes of long options are not taken for the option (``--sel``), so adding an option never changes what an
  existing command line means;
- a command's options are added only when that command runs (or its help is asked for): a run pays for
  its own options, not every command's.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from threadfix.errors import UsageError, did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing itself costs a small run a millisecond or more)
    from typing import Any, NoReturn

#: the metavar-free spelling argparse would give a parser's usage line; each parser states its own instead
HELP_HELP = "Show this message and exit."


class Formatter(argparse.HelpFormatter):
    """Help as the commands wrote it: ``Usage:``, paragraphs re-flowed to the terminal, tables (a line ending
    with ``:`` and its indented rows, such as ``Exit codes:``) kept as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=28, width=_width())

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "Usage: ")

    def _format_action_invocation(self, action: argparse.Action) -> str:
        """``-f, --format FORMAT``: the value's name once, after the last spelling of the option."""
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        return f"{', '.join(action.option_strings)} {self._format_args(action, action.dest.upper())}"

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        blocks = []
        for block in text.strip("\n").split("\n\n"):
            lines = block.strip("\n").splitlines()
            if len(lines) > 1 and lines[0].rstrip().endswith(":") and lines[1][:1].isspace():
                blocks.append("\n".join(f"  {line}" for line in lines))
            else:
                blocks.append(textwrap.fill(" ".join(block.split()), width, initial_indent="  ",
                                            subsequent_indent="  "))
        return "\n\n".join(blocks)


def _width() -> int:
    """The terminal's width (at most 100 columns), or 80 in a pipe, as argparse would but without shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        try:
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 80
    return max(min(columns, 100) - 2, 40)


class Parser(argparse.ArgumentParser):
    """An ``argparse`` parser whose errors are one :class:`UsageError` line and whose help reads ``Usage:``."""

    def __init__(self, prog: str, usage: str, description: str) -> None:
        super().__init__(prog=prog, usage=usage, description=description, formatter_class=Formatter, add_help=False,
                         allow_abbrev=False, exit_on_error=False)
        self._positionals.title = "Arguments"
        self._optionals.title = "Options"

    def error(self, message: str) -> NoReturn:
        missing = "the following arguments are required: "
        if message.startswith(missing):
            names = message.removeprefix(missing)
            raise UsageError("missing command" if names == "COMMAND" else f"missing argument {names}")
        raise UsageError(message)

    def add_help_option(self) -> None:
        """``-h/--help``, listed last, as every command has it."""
        self.add_argument("-h", "--help", action="help", help=HELP_HELP)

    def valued_options(self) -> frozenset[str]:
        """The option strings that take a value (``--jobs``, ``-j``), for :func:`glued`."""
        return frozenset(s for action in self._actions if action.nargs != 0 for s in action.option_strings)

    def parse_into(self, args: Sequence[str], namespace: argparse.Namespace) -> None:
        """Parse a command's ``args`` into ``namespace``, options and arguments in any order.

        Once each option is glued to its value, every option is one word: they are told from the arguments here
        and handed to argparse first, the arguments after ``--`` (argparse's own intermixed parsing loses a ``--``
        on Python 3.11).
        """
        options, arguments = [], []
        words = glued(args, self.valued_options())
        for index, word in enumerate(words):
            if word == "--":
                arguments.extend(words[index + 1:])
                break
            (options if word.startswith("-") and word != "-" else arguments).append(word)
        self.check_options(options)
        try:
            _, extras = self.parse_known_args([*options, "--", *arguments] if arguments else options, namespace)
        except argparse.ArgumentError as exc:
            raise UsageError(said(exc)) from None
        extras = [extra for extra in extras if extra != "--"]
        if extras:
            raise UsageError(f"unexpected extra argument{'s' if len(extras) > 1 else ''}: {' '.join(extras)}")

    def check_options(self, words: Sequence[str]) -> None:
        """Refuse the first of ``words`` (options, each glued to its value) that is not an option of this parser."""
        known = {s for action in self._actions for s in action.option_strings}
        for word in words:
            if (word.partition("=")[0] if word.startswith("--") else word[:2]) not in known:
                raise UsageError(self.unknown_option(word))

    def unknown_option(self, given: str) -> str:
        name = given.partition("=")[0] if given.startswith("--") else given[:2]
        known = [s.removeprefix("--") for action in self._actions for s in action.option_strings if s.startswith("--")]
        hint = did_you_mean(name.removeprefix("--"), known, most=2, show=lambda option: f"--{option}", joined=" or ") \
            if name.startswith("--") else ""
        return f"no such option {name}{'; ' + hint if hint else ''}"


def said(exc: argparse.ArgumentError) -> str:
    """argparse's complaint about one option, in threadfix's words, naming the option as the user knows it."""
    name = max((exc.argument_name or "").split("/"), key=len) or "an argument"
    message = exc.message
    if message.startswith("expected ") and "argument" in message:
        return f"{name} needs a value"
    if message.startswith("ignored explicit argument"):
        return f"{name} takes no value"
    return f"{name}: {message}"


def glued(args: Sequence[str], valued: frozenset[str], *, stop_at_word: bool = False) -> list[str]:
    """``args`` with each option that takes a value joined to it (``--min-age -5m`` -> ``--min-age=-5m``), so a
    value that starts with a dash is the option's value, as in click and getopt, not an option of its own.

    ``stop_at_word``: leave everything from the first word that is not an option or a value (the command) as it is.
    """
    out: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--" or (stop_at_word and not arg.startswith("-")):
            out.extend(args[index:])
            break
        if arg in valued and index + 1 < len(args):
            value = args[index + 1]
            out.append(f"{arg}={value}" if arg.startswith("--") else f"{arg}{value}")
            index += 2
            continue
        out.append(arg)
        index += 1
    return out


class Commands(argparse.Action):
    """The command word and everything after it, parsed by that command's own parser, made only now."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, known: Sequence[str],
                 load: Callable[[str], Parser], describe: Callable[[str], str], **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=argparse.PARSER, metavar="COMMAND", **kwargs)
        self.known = known
        self.load = load
        self.describe = describe

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        name, rest = values[0], values[1:]
        if name not in self.known:
            hint = did_you_mean(name, self.known, most=3)
            raise UsageError(f"no such command {name!r}{'; ' + hint if hint else ''}")
        setattr(namespace, self.dest, name)
        self.load(name).parse_into(rest, namespace)


class Root(Parser):
    """The ``threadfix`` parser: its help lists the commands last, one line each, as ``Commands:``."""

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        formatter.start_section("Options")
        formatter.add_arguments(self._optionals._group_actions)
        formatter.end_section()
        commands = next(action for action in self._actions if isinstance(action, Commands))
        formatter.start_section("Commands")
        formatter.add_arguments([argparse.Action([], name, metavar=name, help=summary(commands.describe(name)))
                                 for name in sorted(commands.known)])
        formatter.end_section()
        return formatter.format_help()


def summary(description: str | None) -> str:
    """A command's first sentence, for the root's list of commands."""
    first = " ".join((description or "").split("\n\n")[0].split())
    sentence, dot, rest = first.partition(". ")
    return sentence + "." if dot else first


class Version(argparse.Action):
    """``--version``: print ``threadfix X.Y.Z`` on stdout and exit 0, whatever else the line says."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, version: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.version = version

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> NoReturn:
        sys.stdout.write(f"threadfix {self.version}\n")
        raise SystemExit(0)
