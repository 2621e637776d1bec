"""The one exception a scan raises for anything a user can act on."""

from ..errors import UserError


class ScanError(UserError):
    """A corpus, an option or an output folder the scan cannot use; the message names it."""
