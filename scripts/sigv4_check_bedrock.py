#!/usr/bin/env python3
"""Sign the requests agentmsg signed with botocore's SigV4 signer and compare.

Usage: sigv4_check_bedrock.py DIR

Every `*.json` file in DIR is one request agentmsg signed
(tests/providers/bedrock.rs writes them): its method, URL, headers, body,
credentials, region, service, time, and the headers agentmsg's signer added.
botocore's `SigV4Auth` signs the same request at the same time (its clock
fixed there) with the same credentials; `Authorization`, `X-Amz-Date` and
`X-Amz-Security-Token` must be equal. Prints one line per difference and ends
with `N passed, M failed`. Exits 1 if anything failed or DIR holds no case.
"""

from __future__ import annotations

import datetime
import sys

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

import check_runner


def check(case, _text):
    when = datetime.datetime.fromtimestamp(case["time"], tz=datetime.timezone.utc)
    botocore.auth.get_current_datetime = lambda when=when: when
    request = AWSRequest(
        method=case["method"],
        url=case["url"],
        data=case["body"].encode("utf-8"),
        headers=dict(case["headers"]),
    )
    credentials = Credentials(case["access_key_id"], case["secret_access_key"], case.get("session_token"))
    botocore.auth.SigV4Auth(credentials, case["service"], case["region"]).add_auth(request)
    ours = {name.lower(): value for name, value in case["signed"]}
    theirs = {
        "authorization": request.headers.get("Authorization"),
        "x-amz-date": request.headers.get("X-Amz-Date"),
        "x-amz-security-token": request.headers.get("X-Amz-Security-Token"),
    }
    return [
        f"{name}: agentmsg {ours.get(name)!r}, botocore {value!r}"
        for name, value in theirs.items()
        if ours.get(name) != value
    ]


if __name__ == "__main__":
    sys.exit(check_runner.main(sys.argv, __doc__, "signed requests", check))
