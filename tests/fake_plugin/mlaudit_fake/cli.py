"""The fake plugin's commands: ``mlaudit fake RUN``, ``mlaudit watch fake``, ``mlaudit batch
fake``, registered through the plugin's ``cli`` member (docs/extending.md walks through the
same pattern)."""

from __future__ import annotations

from pathlib import Path

import typer

from mlaudit.cli import cmd_batch, cmd_watch
from mlaudit.cli.api import (
    CONFIG,
    DRY_RUN,
    FAIL_ON,
    FORMAT,
    NO_WRITE,
    NOTIFY,
    OUT,
    VERBOSE,
    FailOn,
    Format,
    batch_app,
    run_batch_cli,
    run_pipeline,
    run_watch,
    settings_or_fail,
    watch_app,
    watch_config,
)

STORE = typer.Option(None, "--store", envvar="MLAUDIT_FAKE_STORE", help="The fake store folder.")


def _plugin(store):
    from mlaudit_core.plugins import get_plugin

    return get_plugin("fake", store=str(store) if store else None)


def register(app: typer.Typer) -> None:
    @app.command("fake")
    def fake_cmd(
        run_id: str = typer.Argument(..., metavar="RUN"),
        store: Path = STORE,
        fmt: Format = FORMAT,
        out: Path = OUT,
        fail_on: FailOn = FAIL_ON,
        config: Path = CONFIG,
        dry_run: bool = DRY_RUN,
        no_write: bool = NO_WRITE,
        verbose: bool = VERBOSE,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit a fake run; write mlaudit.* tags and a report next to it."""
        from mlaudit.cli.api import fail
        from mlaudit_core.errors import MlauditError

        try:
            plugin = _plugin(store)
        except MlauditError as exc:
            fail(str(exc))
        wb = None if no_write else (lambda run, rep: plugin.write_back(run, rep, dry_run=dry_run))
        run_pipeline(
            lambda: plugin.load(run_id),
            fmt=fmt,
            out=out,
            fail_on=fail_on,
            config=config,
            write_back=wb,
            verbose=verbose,
            what=f"fake run {run_id}",
            notify=notify,
            dry_run=dry_run,
        )

    @watch_app.command("fake")
    def watch_fake(
        store: Path = STORE,
        poll_interval: float = cmd_watch.POLL_INTERVAL,
        concurrency: int = cmd_watch.CONCURRENCY,
        state: Path = cmd_watch.STATE,
        since: str = cmd_watch.SINCE,
        once: bool = cmd_watch.ONCE,
        config: Path = CONFIG,
        notify: list[str] = NOTIFY,
    ) -> None:
        """Audit each fake run as it ends."""
        from mlaudit_core.service import PluginSource

        run_watch(
            lambda: PluginSource(_plugin(store), f"fake {store}"),
            state=state,
            config=config,
            watch=watch_config(poll_interval, concurrency, since, once),
            notify=notify,
        )

    @batch_app.command("fake")
    def batch_fake(
        store: Path = STORE,
        since: str = cmd_batch.SINCE,
        jobs: int = cmd_batch.JOBS,
        state: Path = cmd_batch.STATE,
        fresh: bool = cmd_batch.FRESH,
        worst: int = cmd_batch.WORST,
        no_write: bool = NO_WRITE,
        config: Path = CONFIG,
        fmt: str = cmd_batch.FORMAT,
    ) -> None:
        """Audit every ended fake run, with a summary."""
        settings = settings_or_fail(config)

        def prepare():
            from mlaudit_core.service import TaskSpec, parse_since

            plugin = _plugin(store)
            spec = TaskSpec(
                "fake",
                (("store", str(plugin.store)),),
                settings.model_dump(),
                write_back=not no_write,
            )
            return plugin.list_runs(parse_since(since)), spec, f"fake {plugin.store}"

        run_batch_cli(
            prepare,
            title=f"fake store {store}",
            tracker="fake",
            name="store",
            state=state,
            jobs=jobs,
            executor="local",
            ray_address=None,
            fresh=fresh,
            worst=worst,
            fmt=fmt,
        )
