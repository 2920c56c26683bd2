"""The one `strobe` command: every subcommand is parsed and run by the engine."""
import glob
import os

import gdb


class StrobeCommand(gdb.Command):
    def __init__(self, target, session, subcommands):
        self._target, self._session = target, session
        self._subcommands = {name: (positionals, options)
                             for name, positionals, options in subcommands}
        self.__doc__ = session.execute("help")[1]  # `help strobe` shows the engine's own help
        super().__init__("strobe", gdb.COMMAND_RUNNING)

    def invoke(self, argument, from_tty):
        self.dont_repeat()
        self._target.run_deferred()
        with self._target.selection_kept():
            ok, text = self._session.execute(argument)
        if not ok:
            raise gdb.GdbError(text.strip())  # a failed command fails a gdb -batch script too
        gdb.write(text)

    def complete(self, text, word):
        if word is None:
            return None  # GDB's first call asks only for word-break characters; its defaults do
        token = text.split(" ")[-1]  # the whole word being completed
        words = text.split()
        if len(words) <= 1 and not text.endswith(" "):
            candidates = list(self._subcommands)
        else:
            positionals, options = self._subcommands.get(words[0], ("", []))
            if token.startswith("-"):
                candidates = options
            elif "SUBCOMMAND" in positionals:
                candidates = list(self._subcommands)
            elif "FILE" in positionals:
                candidates = [path + "/" if os.path.isdir(path) else path
                              for path in glob.glob(glob.escape(token) + "*")]
            else:
                return []
        # GDB also breaks words at '-', '/' and '.', so `word` may be only the end of `token`.
        typed = len(token) - len(word)
        return [c[typed:] for c in candidates if c.startswith(token)]
