"""Policy answers are remembered until the rules change."""
from __future__ import annotations

import pytest
from oslo_policy import policy as oslo_policy

from novalite import context as nl_context
from novalite import exception, policy

RULE = 'os_compute_api:os-flavor-manage:create'


@pytest.fixture
def enforcer():
    policy.reset()
    yield policy.init()
    policy.reset()


def _member():
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])


def test_the_same_question_is_answered_once(enforcer, monkeypatch):
    asked = []
    real = enforcer.authorize

    def counting(*args, **kwargs):
        asked.append(args[0])
        return real(*args, **kwargs)
    monkeypatch.setattr(enforcer, 'authorize', counting)
    for _ in range(5):
        assert not policy.authorize(_member(), RULE, None, fatal=False)
    with pytest.raises(exception.PolicyNotAuthorized):
        policy.authorize(_member(), RULE, None)
    assert asked == [RULE]
    # Another project asks again.
    other = nl_context.RequestContext(user_id='u2', project_id='p2', roles=['member'])
    policy.authorize(other, RULE, None, fatal=False)
    assert asked == [RULE, RULE]


def test_new_rules_forget_the_answers(enforcer):
    assert not policy.authorize(_member(), RULE, None, fatal=False)
    enforcer.set_rules(oslo_policy.Rules.from_dict({RULE: '@'}), overwrite=False,
                       use_conf=False)
    assert policy.authorize(_member(), RULE, None, fatal=False)
