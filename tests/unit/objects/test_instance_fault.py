"""What a fault tells the server's owner: a 4xx fault carries no traceback (the owner
sees its details), and an exception novalite did not raise shows only its class (its
text may be SQL); the traceback stays for 500s, which only administrators see."""
from __future__ import annotations

from novalite import exception
from novalite.objects.instance_fault import InstanceFault


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


def test_a_quota_fault_shows_its_owner_no_traceback():
    error = _raised(exception.TooManyInstances(overs='ram', req=0, used=256, allowed=3))
    fault = InstanceFault.from_exception(None, 'u1', error)
    assert fault.code == 403
    assert 'Traceback' not in fault.details
    assert fault.details == fault.message


def test_a_foreign_exception_shows_its_class_not_its_text():
    error = _raised(RuntimeError("(pymysql.err.OperationalError) SELECT * FROM instances"))
    fault = InstanceFault.from_exception(None, 'u1', error)
    assert fault.code == 500
    assert fault.message == 'RuntimeError'
    assert 'Traceback' in fault.details and 'SELECT' in fault.details
