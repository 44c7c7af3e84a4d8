"""The error every stage raises when the target cannot be read or asked now: its message says
what happened, where, and what to do (the front ends print it as one line)."""


class TargetError(Exception):
    """The target cannot be read now; the message says why and what to do."""
