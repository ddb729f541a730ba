"""Joining a Ray cluster that is already running (`--ray-address`), for self-play and review.

Ray 2.60 turns token authentication on for a head started with `ray start --head` wherever a
token already exists (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token, which any local
`ray.init()` writes), but never for a driver given an explicit address: that driver sends no
token and the head refuses it ("InvalidAuthToken"). So the driver takes the same decision as
`ray start --head`, by Ray's own function, before it connects; a cluster without authentication
ignores a token it is sent.
"""

from __future__ import annotations

import logging


def join(address: str) -> None:
    """ray.init on the cluster at `address`, quietly, sending this machine's token if it has
    one. RAY_AUTH_MODE set by the user decides alone, as it does for Ray."""
    import ray
    from ray._private.authentication.authentication_token_setup import (
        maybe_enable_token_auth_if_token_available,
    )

    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
