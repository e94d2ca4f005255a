"""The one exception a command raises for a usage error (exit status 2)."""


class UsageError(Exception):
    pass
