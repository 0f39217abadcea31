"""What ``mqconform run`` shows on the terminal: a progress bar while the cases run, then a
summary (verdicts, wire coverage per document, each unexpected failure with its requirement
IDs, its first message and its frames in wire.pcap, where the reports are).

``mqconform run`` loads this plugin in place of pytest's terminal reporter (``-p no:terminal
-p conformance.progress``); run as a plain pytest plugin (``pytest --mq-target ...``) the suite
keeps pytest's own output. Errors that stop the run before any case (a step module that does not
import, a target that cannot be opened) are printed in full here, since pytest's reporter is
not there to print them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mqconform.conformance import verdicts as v
from mqconform.conformance.suite_plugin import STATE, coverage

COLOURS = {"pass": "green", "fail": "red", "inconclusive": "yellow",
           "not-applicable": "bright_black", "error": "magenta", "not-run": "bright_black"}


class Progress:
    def __init__(self, config: pytest.Config):
        from rich.console import Console

        self.config = config
        self.console = Console(highlight=False, soft_wrap=True)
        self.bar = None
        self.task = None
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.errors: list[str] = []

    # ------------------------------------------------------------------ while running
    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.errors.append(f"cannot collect {report.nodeid or 'the cases'}:\n"
                               f"{report.longreprtext}")

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bar

        if not session.items:
            return
        self.bar = Bar(TextColumn("[bold]{task.description}"), BarColumn(),
                       MofNCompleteColumn(), TextColumn("{task.fields[counts]}"),
                       TimeElapsedColumn(), console=self.console, transient=False)
        self.task = self.bar.add_task("cases", total=len(session.items), counts="")
        self.bar.start()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.counts["passed" if report.passed else
                        "skipped" if report.skipped else "failed"] += 1
        if report.when == "teardown" and self.bar is not None:
            c = self.counts
            self.bar.update(self.task, advance=1,
                            counts=f"[green]{c['passed']} ok[/] [red]{c['failed']} failed[/] "
                                   f"[bright_black]{c['skipped']} skipped[/]")

    @pytest.hookimpl
    def pytest_internalerror(self, excrepr: Any) -> None:
        self.errors.append(f"internal error:\n{excrepr}")

    # ------------------------------------------------------------------ at the end
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        from rich.markup import escape
        from rich.table import Table


        if self.bar is not None:
            self.bar.stop()
        for error in self.errors:
            self.console.print(f"[red]error:[/] {escape(error)}")
        state = session.config.stash.get(STATE, None)
        if not state or not state["results"]:
            if not self.errors:
                self.console.print("no case ran: nothing is selected, or the suite did not "
                                   "start")
            return
        results: list[v.CaseResult] = state["results"]
        s = v.summarize(results)
        table = Table(title=f"mqconform: {results[0].target}", show_edge=False)
        shown = ["pass", "fail", "inconclusive", "not-applicable"] + [
            k for k in ("error", "not-run") if s[k]]
        for name in shown:
            table.add_column(name, justify="right", style=COLOURS.get(name, "magenta"))
        table.add_column("unexpected", justify="right", style="bold red")
        table.add_row(*(str(s[k]) for k in (*shown, "unexpected_failures")))
        self.console.print(table)
        done = state.get("completion") or {}
        if done.get("exit_code") == v.EXIT_CONFORMANT:
            self.console.print("[green]conformant[/]: the run completed with no unexpected "
                               "failure")
        elif done:
            self.console.print(f"[bold]{escape(done['meaning'])}[/]"
                               + (f": {escape('; '.join(done['incomplete']))}"
                                  if done["incomplete"] else ""))
        for doc, c in coverage(state["catalog"], results).items():
            self.console.print(f"wire coverage {doc}: {c['covered_by_passing_case']}/"
                               f"{c['wire']} ({c['percent']} %)")
        if s["expected_failures"] or s["expected_failures_passed"] or s["warnings"]:
            self.console.print(f"{s['expected_failures']} expected failure(s), "
                               f"{s['expected_failures_passed']} expected failure(s) passed, "
                               f"{s['warnings']} warning(s)")
        for r in results:
            if r.verdict == v.ERROR:
                self.console.print(f"[magenta]ERROR[/] {escape(r.case)}: "
                                   f"{escape((r.messages or [''])[0][:300])}")
            if r.unexpected or r.expected_failure_passed:
                what = "FAIL" if r.unexpected else "expected failure PASSED"
                shown = r.failed_ids or r.ids
                first = (r.messages or [""])[0].splitlines()[:1]
                frames = (f" frames {r.frames['first']}-{r.frames['last']}"
                          if r.frames else "")
                self.console.print(f"[red]{what}[/] {escape(r.case)} "
                                   f"[{escape(' '.join(shown[:4]))}"
                                   f"{' ...' if len(shown) > 4 else ''}]{frames}")
                if first:
                    self.console.print(f"    {escape(first[0][:300])}")
                step = (r.failures[0].get("step") if r.failures else None) or {}
                if step:
                    self.console.print(f"    at {escape(step.get('path', ''))}:"
                                       f"{step.get('line', '')} {escape(step.get('text', ''))}")
        for path in state.get("written", []):
            if path.name == "index.html":
                self.console.print(f"report: {Path(path).resolve()}")
            elif path.suffix == ".pcap" and state.get("recorder") is not None:
                self.console.print(f"wire: {Path(path).resolve()} "
                                   f"({state['recorder'].frame_count} frames)")
            elif path.name in ("results.json", "junit.xml"):
                self.console.print(f"{path.name}: {Path(path).resolve()}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Progress(config), "mqconform-progress")
