"""The suite as a pytest plugin, installed with mqconform (entry point ``pytest11``).

Inert unless ``--mq-target`` is given: it only adds its ``--mq-*`` options to pytest, collects
nothing, defines no fixture and changes nothing else, so a user's own test runs are as they
were. With ``--mq-target FILE|reference|model|ncacn_ip_tcp:HOST[PORT]`` it registers the
suite's hooks and fixture (conformance/suite_plugin.py) and, when no path is given on the
command line, collects the installed suite (conformance/cases/), from any directory::

    pytest --mq-target reference -q
    pytest --mq-target mytarget.yaml --mq-report-dir reports -m MS-MQRR/3.1.4.7  # trace: ignore
    pytest --mq-target reference -k "Cancel" -x

Options: ``--mq-report-dir DIR`` (results.json, junit.xml, index.html, wire.pcap),
``--mq-select ID-prefix`` (repeatable), ``--mq-strict`` (SHOULD-level failures fail the run),
``--mq-stateful-examples/-steps/-seed``. Selection the pytest way: every case carries one
marker per requirement ID it covers and per section and document above it
(suite_plugin.selection_marks), so ``-m`` with a section runs it, subsections included, with
an ID one requirement, and pytest's mark expressions combine them::

    pytest --mq-target reference -m MS-MQRR/3.1.4.7                    # trace: ignore
    pytest --mq-target reference -m "MS-MQMR and not MS-MQMR/3.1.4.2"  # trace: ignore
``mqconform run`` is this plugin with a progress bar and the report directory set.

pytest-xdist is refused (a usage error naming it): the suite's reports are written by the
process that runs the cases and would be empty under workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mqconform", "MSMQ RemoteRead/qmmgmt conformance suite "
                                         "(inert unless --mq-target is given)")
    group.addoption("--mq-target", default=None, metavar="TARGET",
                    help="run the conformance suite against a target file (YAML), reference "
                         "(the embedded server over RPC), model (in process) or "
                         "ncacn_ip_tcp:HOST[PORT]")
    group.addoption("--mq-report-dir", default=None, metavar="DIR",
                    help="write results.json, junit.xml, index.html and wire.pcap here")
    group.addoption("--mq-select", action="append", default=[], metavar="ID",
                    help="run only cases of requirement IDs with this prefix (repeatable)")
    group.addoption("--mq-strict", action="store_true",
                    help="SHOULD-level failures fail the run")
    group.addoption("--mq-redact-auth", action="store_true",
                    help="zero the NTLMSSP tokens of the binds in wire.pcap (the exchange a "
                         "password can be attacked from offline)")
    group.addoption("--mq-allow-inconclusive", action="store_true",
                    help="inconclusive cases (a precondition could not be set up) do not make "
                         "the run incomplete")
    group.addoption("--mq-min-coverage", type=float, default=None, metavar="PCT",
                    help="the run is incomplete below this wire coverage (percent of the "
                         "wire-testable requirements of MS-MQRR and MS-MQMR a passing case "
                         "covers)")
    group.addoption("--mq-stateful-examples", type=int, default=None, metavar="N",
                    help="examples per stateful machine (conformance/stateful.py)")
    group.addoption("--mq-stateful-steps", type=int, default=None, metavar="N",
                    help="steps per example of a stateful machine")
    group.addoption("--mq-stateful-seed", type=int, default=None, metavar="N",
                    help="seed of the stateful machines (fixed by default)")
    group.addoption("--mq-stateful-no-shrink", action="store_true",
                    help="report a stateful machine's first failing sequence as found, not "
                         "shrunk (a quicker gate; its script still replays the failure)")


def cases_dir() -> Path:
    """The suite's cases, wherever mqconform is installed."""
    from mqconform.conformance import cases

    return Path(cases.__file__).resolve().parent


def _xdist_workers(config: pytest.Config) -> bool:
    numprocesses = getattr(config.option, "numprocesses", None)
    dist = getattr(config.option, "dist", "no")
    return bool(numprocesses) or dist not in (None, "no")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--mq-target", None) is None:
        return  # inert
    if _xdist_workers(config):
        raise pytest.UsageError(
            "--mq-target: pytest-xdist (-n/--dist) is not supported: the suite's cases share "
            "one target and one report; run without -n")
    if config.args_source in (pytest.Config.ArgsSource.INVOCATION_DIR,
                              pytest.Config.ArgsSource.TESTPATHS):
        config.args = [str(cases_dir())]  # no path given: the installed suite
    config.option.importmode = "importlib"  # the cases import as mqconform.conformance.cases
    from mqconform.conformance import suite_plugin

    if not config.pluginmanager.is_registered(suite_plugin):
        config.pluginmanager.register(suite_plugin, "mqconform-suite")
