"""Create the W&B Automation that drives ``mlaudit serve wandb-webhook``.

``mlaudit serve wandb-webhook --install-automation ENTITY/PROJECT [--webhook NAME]`` calls
:func:`install_automation`: through the SDK's public ``wandb.automations`` API
(``Api.project``, ``Api.webhook_integrations``, ``OnRunState``, ``SendWebhook``,
``Api.create_automation``; wandb >= 0.22) it creates, in the project, an automation
"a run's state changes to finished or failed" whose action is the team's webhook pointing at
the receiver, with the payload :data:`PAYLOAD`.

The payload uses documented payload variables only (W&B docs, "Create a webhook
automation" -> "Payload variables": ``${project_name}``, ``${entity_name}``,
``${event_type}``, ``${event_author}``, the artifact variables, ``${ACCESS_TOKEN}`` and
secrets). None of them names the run, so a delivery says "a run of ENTITY/PROJECT
ended": the receiver then lists that project's ended runs that carry no verdict for their
current state (the same listing as ``mlaudit watch wandb``) and queues them
(:func:`mlaudit_wandb.triage.make_app`). Payloads that do name a run (``run_path``,
``run_url``, ``entity``/``project``/``run_id``, e.g. from your own sender) are still
queued directly.

What cannot be done from the SDK: the webhook itself (its URL and the access-token secret)
is made by a team admin in Team Settings -> Webhooks (W&B keeps the token as a team
secret); :func:`install_automation` finds it by name, or by URL when only one matches.

W&B's ``RunStateFilter`` offers ``finished`` and ``failed`` (the SDK maps ``crashed`` to
``failed``), so crashed and killed runs trigger it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlaudit_core.errors import InputError

#: The automation's request payload: documented payload variables only.
PAYLOAD = {
    "event_type": "${event_type}",
    "entity": "${entity_name}",
    "project": "${project_name}",
    "event_author": "${event_author}",
}
#: Run states that trigger it (the SDK's RunEvent.state values).
STATES = ("finished", "failed")
#: Default automation name (W&B refuses a second automation with the same name).
DEFAULT_NAME = "mlaudit-triage"


@dataclass
class Installed:
    """What :func:`install_automation` did: ``created`` False when an automation with that
    name already existed (nothing changed)."""

    name: str
    project: str
    webhook: str
    url: str
    created: bool
    automation_id: str | None = None


def pick_webhook(hooks: list, name: str | None) -> object:
    """The webhook integration named ``name``; without a name the only one there is.

    Raises:
        InputError: none, no such name, or several and no name (names listed).
    """
    if name:
        match = [h for h in hooks if h.name == name]
        if not match:
            have = ", ".join(sorted(h.name for h in hooks)) or "none"
            raise InputError(
                f"--webhook {name!r}: no such webhook in the team (have: {have}); "
                "create it in Team Settings -> Webhooks"
            )
        return match[0]
    if not hooks:
        raise InputError(
            "the team has no webhook: create one in Team Settings -> Webhooks "
            "(URL https://<host>/webhook, access token = the secret in "
            "MLAUDIT_WANDB_WEBHOOK_SECRET), then run this again"
        )
    if len(hooks) > 1:
        raise InputError(
            "the team has several webhooks ("
            + ", ".join(sorted(h.name for h in hooks))
            + "): name one with --webhook NAME"
        )
    return hooks[0]


def install_automation(
    api, project: str, *, webhook: str | None = None, name: str = DEFAULT_NAME
) -> Installed:
    """Create the run-state automation in ``project`` (``ENTITY/PROJECT``).

    Args:
        api: a logged-in ``wandb.Api``.
        project: ``ENTITY/PROJECT``.
        webhook: the team webhook's name (None: the only one).
        name: the automation's name.

    Returns:
        :class:`Installed`; ``created`` False when an automation named ``name`` exists.

    Raises:
        InputError: no such project, no usable webhook, or the server does not support
            run-state automations (W&B server < 0.69 or a plan without Automations).
    """
    from wandb.automations import OnRunState, RunEvent, SendWebhook

    entity, _, proj = project.partition("/")
    try:
        scope = api.project(proj, entity=entity)
    except ValueError as exc:  # "Unable to fetch project ID"
        raise InputError(f"{project}: no such W&B project ({exc})") from None
    hook = pick_webhook(list(api.webhook_integrations(entity=entity)), webhook)
    event = OnRunState(scope=scope, filter=RunEvent.state.in_(list(STATES)))
    action = SendWebhook.from_integration(hook, payload=dict(PAYLOAD))
    try:
        made = api.create_automation(
            event >> action,
            name=name,
            description="mlaudit: audit each run of this project when it finishes or fails "
            "(mlaudit serve wandb-webhook)",
        )
    except Exception as exc:  # the SDK's normalize_exceptions wraps its ValueError (409)
        if f"Automation {name!r} exists" in str(exc):
            return Installed(name, project, hook.name, hook.url_endpoint, created=False)
        if type(exc).__name__ == "UnsupportedError" or "not supported on this wandb server" in str(
            exc
        ):
            raise InputError(
                f"{project}: this W&B server does not support run-state webhook "
                "automations (W&B server >= 0.69 and a Pro/Enterprise plan); use "
                "`mlaudit watch wandb` instead"
            ) from None
        raise
    return Installed(
        name,
        project,
        hook.name,
        hook.url_endpoint,
        created=True,
        automation_id=getattr(made, "id", None),
    )
