# Shared by the math actor tests: run one _async/_finish pair, get the GPU
# or fall back to the public mock device.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import gi
gi.require_version('Atomr', '1')
from gi.repository import Atomr, GLib  # noqa: E402


def run(start, finish):
    """Runs one _async call on the default main context, returns _finish."""
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        try:
            outcome['value'] = finish(result)
        except GLib.Error as error:
            outcome['error'] = error
        loop.quit()

    start(done)
    loop.run()
    if 'error' in outcome:
        raise outcome['error']
    return outcome['value']


def expect_error(code, needle, start, finish):
    """The call must fail with Atomr.Error `code` whose message has `needle`."""
    try:
        run(start, finish)
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), code), (error.code, error.message)
        assert needle in error.message, (needle, error.message)
        return
    raise AssertionError(f'expected an error mentioning {needle!r}')


def gpu_or_none():
    try:
        return Atomr.Device.get(0)
    except GLib.Error as error:
        if error.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE):
            return None
        raise
