"""``mlaudit serve mlflow-webhook``: MLflow's signed model-registry webhooks (MLflow >= 3.3)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from mlaudit.cli.api import CONFIG


def register(app: typer.Typer) -> None:
    from mlaudit.cli.api import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, serve_app

    @serve_app.command("mlflow-webhook")
    def serve_mlflow(
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
        port: int = typer.Option(8788, "--port", min=1, max=65535, help="TCP port."),
        tracking_uri: str = typer.Option(
            None,
            "--tracking-uri",
            "-u",
            envvar="MLFLOW_TRACKING_URI",
            help="The MLflow server whose registry sends the "
            "webhooks (default: MLFLOW_TRACKING_URI).",
        ),
        gate: bool = typer.Option(
            False,
            "--gate",
            help="Also tag each model version mlaudit.gate=passed|blocked "
            "for a promotion rule to check.",
        ),
        gate_allow: list[str] = typer.Option(
            ["succeeded"],
            "--gate-allow",
            metavar="OUTCOME",
            help="Outcomes that pass the gate (repeat; default succeeded).",
        ),
        no_run_write: bool = typer.Option(
            False, "--no-run-write", help="Tag the model version only; leave the run as is."
        ),
        max_age: float = typer.Option(
            300.0,
            "--max-age",
            min=1,
            max=3600,
            help="Seconds a delivery's timestamp may be from now.",
        ),
        max_connections: int = typer.Option(
            DEFAULT_MAX_CONNECTIONS,
            "--max-connections",
            min=1,
            max=10000,
            help="Connections served at once.",
        ),
        header_timeout: float = typer.Option(
            DEFAULT_HEADER_TIMEOUT_S,
            "--header-timeout",
            min=0.1,
            max=3600,
            help="Seconds for a connection's request headers.",
        ),
        body_timeout: float = typer.Option(
            10.0,
            "--body-timeout",
            min=0.1,
            max=3600,
            help="Seconds a delivery may take to send its body; then 408.",
        ),
        state: Path = typer.Option(
            None,
            "--state",
            help="State file (sqlite) holding accepted deliveries until "
            "audited; survives restarts (default ./.mlaudit/serve-"
            "mlflow-webhook-<hash>.sqlite).",
        ),
        max_queue: int = typer.Option(
            1000, "--max-queue", min=1, help="Deliveries waiting for an audit before 503."
        ),
        max_attempts: int = typer.Option(
            3, "--max-attempts", min=1, help="Audits of one delivery before it is given up."
        ),
        config: Path = CONFIG,
    ) -> None:
        """Receive MLflow model-registry webhooks; on model_version.created audit the source run
        and tag the model version (mlaudit.verdict, mlaudit.cause, mlaudit.report; --gate:
        mlaudit.gate). The webhook secret is read from MLAUDIT_MLFLOW_WEBHOOK_SECRET (never
        printed); deliveries are checked against MLflow's HMAC signature and timestamp, and
        kept in --state until audited (a restart loses none and re-audits none)."""
        import signal
        import socket

        from mlaudit.cli.api import fail, make_server, settings_or_fail
        from mlaudit_core.plugins import get_plugin
        from mlaudit_core.report import Outcome
        from mlaudit_mlflow.registry_webhook import (
            SECRET_ENV,
            GateConfig,
            Receiver,
            RegistryAuditor,
            make_app,
        )

        secret = os.environ.get(SECRET_ENV, "").strip()
        if not secret:
            fail(
                f"set {SECRET_ENV} to the webhook's secret (the one given to "
                "MlflowClient.create_webhook)"
            )
        known = {o.value for o in Outcome}
        for o in gate_allow:
            if o not in known:
                fail(f"--gate-allow {o!r}: not an outcome ({', '.join(sorted(known))})")
        settings = settings_or_fail(config)
        try:
            with socket.create_server((host, port)):
                pass
        except OSError as exc:
            fail(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})")
        import hashlib

        from mlaudit_core.errors import MlauditError
        from mlaudit_core.redact import strip_uri_credentials
        from mlaudit_core.service import StateStore, default_state_path
        from mlaudit_mlflow.loader import resolve_uri
        from mlaudit_mlflow.registry_state import DeliveryQueue

        uri = resolve_uri(tracking_uri)
        shown = strip_uri_credentials(uri)
        try:
            store = StateStore(
                state
                or default_state_path(
                    "serve", "mlflow-webhook", hashlib.sha1(shown.encode()).hexdigest()[:10]
                ),
                f"mlflow registry webhook {shown}",
            )
        except MlauditError as exc:
            fail(str(exc))
        auditor = RegistryAuditor(
            get_plugin("mlflow", tracking_uri=uri),
            settings,
            uri,
            GateConfig(gate, tuple(gate_allow)),
            write_run=not no_run_write,
        )
        deliveries = DeliveryQueue(store, max_queue=max_queue, max_attempts=max_attempts)
        receiver = Receiver(auditor, secret, deliveries, max_age_s=max_age)
        receiver.start()
        server = make_server(
            make_app(receiver, body_timeout_s=body_timeout),
            host,
            port,
            max_connections=max_connections,
            header_timeout_s=header_timeout,
        )
        typer.echo(
            f"mlaudit: MLflow registry webhook receiver on http://{host}:{port}/webhook "
            f"(registry {shown}{', gate on' if gate else ''}; state {store.path})"
        )
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: setattr(server, "should_exit", True))
        try:
            server.run()
        finally:
            receiver.stop()
            store.close()
