"""The one exception a scan raises for anything a user can act on."""


class ScanError(Exception):
    """A corpus, an option or an output folder the scan cannot use; the message names it."""
