"""Policy enforcement: one oslo.policy Enforcer over the global CONF and the in-code rules."""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING

import cachetools
from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from novalite import exception
from novalite.conf import CONF

if TYPE_CHECKING:
    from oslo_policy._checks import BaseCheck

    from novalite.context import RequestContext

_ENFORCER: _Enforcer | None = None
_LOCK = threading.Lock()
# Seconds between two looks at the policy file and policy.d for changes.
RELOAD_CHECK_INTERVAL = 1.0


# Most answers kept at once (the same users asking about the same projects, mostly).
MAX_ANSWERS = 10000


class _Enforcer(oslo_policy.Enforcer):
    """oslo.policy's enforcer, looking for policy file changes at most once a second
    instead of on every check (a server show makes several checks; each look is a
    dozen ``stat`` calls), and remembering its answers until the rules change: a
    client polling a server asks the same questions every time. An edited policy file
    still applies within a second."""

    _last_look = 0.0

    def __init__(self, conf: cfg.ConfigOpts, policy_file: str | None = None,
                 use_conf: bool = True) -> None:
        super().__init__(conf, policy_file=policy_file, use_conf=use_conf)
        # (action, target, credentials) -> allowed; the least recently asked go first.
        self.answers: cachetools.LRUCache[tuple, bool] = cachetools.LRUCache(MAX_ANSWERS)
        self.answers_lock = threading.Lock()

    def forget_answers(self) -> None:
        with self.answers_lock:
            self.answers.clear()

    def load_rules(self, force_reload: bool = False) -> None:
        now = time.monotonic()
        if not force_reload and self.rules and now - self._last_look < RELOAD_CHECK_INTERVAL:
            return
        self._last_look = now
        before = self.rules
        super().load_rules(force_reload)
        if self.rules is not before:
            self.forget_answers()

    def set_rules(self, rules: MutableMapping[str, BaseCheck], overwrite: bool = True,
                  use_conf: bool = False) -> None:
        super().set_rules(rules, overwrite=overwrite, use_conf=use_conf)
        self.forget_answers()

    def clear(self) -> None:
        super().clear()
        self.forget_answers()


def _frozen(values: Mapping[str, object]) -> tuple | None:
    """A hashable copy of a flat dict (lists become tuples), None if it has more."""
    items = []
    for key, value in values.items():
        if isinstance(value, list):
            value = tuple(value)
        try:
            hash(value)
        except TypeError:
            return None
        items.append((key, value))
    return tuple(sorted(items, key=lambda item: item[0]))


def _conf_parsed() -> bool:
    try:
        CONF.find_file('policy.yaml')
    except cfg.NotInitializedError:
        return False
    return True


def init(policy_file: str | None = None, rules: dict | None = None,
         use_conf: bool = True) -> _Enforcer:
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


def authorize(context: RequestContext, action: str, target: dict | None,
              fatal: bool = True) -> bool:
    """Whether ``context`` may do ``action`` on ``target``.

    :raises PolicyNotAuthorized: when not allowed and ``fatal`` (HTTP 403)
    :raises oslo_policy.PolicyNotRegistered: ``action`` is no rule in code (a bug)
    """
    enforcer = init()
    credentials = context.to_policy_values()
    target = target if target is not None else {'project_id': context.project_id,
                                                'user_id': context.user_id}
    frozen_target, frozen_creds = _frozen(target), _frozen(credentials)
    key = None
    if frozen_target is not None and frozen_creds is not None:
        key = (action, frozen_target, frozen_creds)
    enforcer.load_rules()  # at most once a second; forgets the answers if rules changed
    allowed = None
    if key is not None:
        with enforcer.answers_lock:
            allowed = enforcer.answers.get(key)
    if allowed is None:
        try:
            allowed = enforcer.authorize(action, target, credentials, do_raise=False)
        except oslo_policy.InvalidScope:
            allowed = False
        if key is not None:
            with enforcer.answers_lock:
                enforcer.answers[key] = allowed
    if not allowed and fatal:
        raise exception.PolicyNotAuthorized(action=action)
    return allowed


def check_is_admin(context: RequestContext) -> bool:
    """Whether the ``context_is_admin`` rule holds for ``context``."""
    enforcer = init()
    credentials = context.to_policy_values()
    return enforcer.authorize('context_is_admin', credentials, credentials)
