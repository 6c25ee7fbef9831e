# SPDX-License-Identifier: MIT
"""Exceptions raised for negative return codes of libditto."""

import errno

from . import _lib
from ._lib import lib

__all__ = ['DittoError', 'CorruptError', 'SchemaError', 'InvalidError', 'LimitError',
           'MismatchError', 'NotFoundError', 'DittoTypeError', 'OptionsError', 'BuildError',
           'LoadError', 'strerror', 'last_error']


def strerror(code):
    """ditto_strerror(): static name of an error code (negative or positive)."""
    return _lib.decode(lib.ditto_strerror(int(code)))


def last_error():
    """ditto_last_error(): message of the last failure on this thread ('' if none)."""
    return _lib.decode(lib.ditto_last_error()) or ''


class DittoError(Exception):
    """A libditto call failed.

    code     the negative return code (-errno or -DITTO_E*)
    name     ditto_strerror(code)
    message  ditto_last_error() right after the failure, with context
    """

    def __init__(self, code, message='', name=None):
        code = int(code)
        if code > 0:
            code = -code
        self.code = code
        self.name = name if name is not None else strerror(code)
        self.message = message or ''
        super().__init__(code, self.message)

    def __str__(self):
        if self.message:
            return '%s (%s)' % (self.message, self.name)
        return self.name


class CorruptError(DittoError):
    """-DITTO_ECORRUPT: input is not well-formed (bad msgpack, truncated)."""


class SchemaError(DittoError):
    """-DITTO_ESCHEMA: schema version not supported by this library."""


class InvalidError(DittoError):
    """-DITTO_EINVALID: well-formed model that breaks a rule."""


class LimitError(DittoError):
    """-DITTO_ELIMIT: input exceeds a safety limit (size, depth, count)."""


class MismatchError(DittoError):
    """-DITTO_EMISMATCH: objects cannot be combined."""


class NotFoundError(DittoError):
    """-DITTO_ENOTFOUND: no such element (path, service, key)."""


class DittoTypeError(DittoError):
    """-DITTO_ETYPE: element exists with another type than asked."""


class OptionsError(DittoError):
    """-DITTO_EOPTS: options struct with unknown non-zero fields or bad sz."""


class BuildError(DittoError):
    """-DITTO_EBUILD: a generated clone failed to build (the message ends
    with the build log's last lines)."""


class LoadError(DittoError):
    """ditto.load(): the run itself failed: -EIO no request was answered
    (each one failed, or none came back), -ETIMEDOUT the deadline passed
    first, -ECANCELED stopped before any answer. result is the run's dict
    all the same; its errors_by_kind says why, and so does the message."""

    def __init__(self, code, message='', name=None, result=None):
        super().__init__(code, message, name)
        self.result = result


_CLASSES = {
    -_lib.ECORRUPT: CorruptError,
    -_lib.ESCHEMA: SchemaError,
    -_lib.EINVALID: InvalidError,
    -_lib.ELIMIT: LimitError,
    -_lib.EMISMATCH: MismatchError,
    -_lib.ENOTFOUND: NotFoundError,
    -_lib.ETYPE: DittoTypeError,
    -_lib.EOPTS: OptionsError,
    -_lib.EBUILD: BuildError,
}


def error(code, message=None):
    """The exception for code; message defaults to ditto_last_error().

    Call it right after the failing call: the message is read first, before
    any other libditto call can replace it."""
    if message is None:
        message = last_error()
    code = -abs(int(code))
    return _CLASSES.get(code, DittoError)(code, message)


def check(rc):
    """Raise the DittoError for a negative return code; return rc otherwise."""
    if rc < 0:
        raise error(rc)
    return rc


def null_error(default_code=-errno.ENOMEM):
    """The exception for a function that returned NULL (no code to read)."""
    return error(default_code, last_error())
