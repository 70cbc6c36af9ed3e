"""Policy enforcement: one oslo.policy Enforcer over the global CONF and the in-code rules."""
from __future__ import annotations

import threading
import time
from typing import Any

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from novalite import exception
from novalite.conf import CONF

_ENFORCER: oslo_policy.Enforcer | None = None
_LOCK = threading.Lock()
# Seconds between two looks at the policy file and policy.d for changes.
RELOAD_CHECK_INTERVAL = 1.0


class _Enforcer(oslo_policy.Enforcer):
    """oslo.policy's enforcer, looking for policy file changes at most once a second
    instead of on every check (a server show makes several checks; each look is a
    dozen ``stat`` calls). An edited policy file still applies within a second."""

    _last_look = 0.0

    def load_rules(self, force_reload: bool = False) -> None:
        now = time.monotonic()
        if not force_reload and self.rules and now - self._last_look < RELOAD_CHECK_INTERVAL:
            return
        self._last_look = now
        super().load_rules(force_reload)


def _conf_parsed() -> bool:
    try:
        CONF.find_file('policy.yaml')
    except cfg.NotInitializedError:
        return False
    return True


def init(policy_file: str | None = None, rules: dict | None = None,
         use_conf: bool = True) -> oslo_policy.Enforcer:
    """Create the enforcer once; ``rules`` (name → check string) override the file.

    Before CONF has parsed its arguments there is no policy file to look for, so only
    the defaults in code apply (unit tests, tools).
    """
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            from novalite import policies
            use_conf = use_conf and _conf_parsed()
            defaults = policies.list_rules()
            enforcer = _Enforcer(CONF, policy_file=policy_file, use_conf=use_conf)
            enforcer.register_defaults(defaults)
            if not use_conf:
                # Without a policy file oslo.policy never loads the defaults itself.
                enforcer.set_rules(oslo_policy.Rules({d.name: d.check for d in defaults}),
                                   use_conf=False)
            if rules:
                enforcer.set_rules(oslo_policy.Rules.from_dict(rules), overwrite=False,
                                   use_conf=use_conf)
            _ENFORCER = enforcer
        return _ENFORCER


def reset() -> None:
    """Forget the enforcer (tests; rules are read again on next use)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def get_enforcer() -> oslo_policy.Enforcer:
    """The enforcer for the oslopolicy-* command line tools only: it parses CONF."""
    CONF([], project='novalite')
    return init()


def authorize(context: Any, action: str, target: dict | None, fatal: bool = True) -> bool:
    """Whether ``context`` may do ``action`` on ``target``.

    :raises PolicyNotAuthorized: when not allowed and ``fatal`` (HTTP 403)
    :raises oslo_policy.PolicyNotRegistered: ``action`` is no rule in code (a bug)
    """
    enforcer = init()
    credentials = context.to_policy_values()
    target = target if target is not None else {'project_id': context.project_id,
                                                'user_id': context.user_id}
    try:
        return enforcer.authorize(action, target, credentials, do_raise=fatal,
                                  exc=exception.PolicyNotAuthorized, action=action)
    except oslo_policy.InvalidScope as exc:
        if fatal:
            raise exception.PolicyNotAuthorized(action=action) from exc
        return False


def check_is_admin(context: Any) -> bool:
    """Whether the ``context_is_admin`` rule holds for ``context``."""
    enforcer = init()
    credentials = context.to_policy_values()
    return enforcer.authorize('context_is_admin', credentials, credentials)
