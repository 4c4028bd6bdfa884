"""Scale an a2aserve-core server out on Redis: several replicas behind a load balancer, one server.

    from a2aserve_redis import RedisBackend

    backend = RedisBackend("redis://127.0.0.1:6379/0", prefix="my-agent:")
    server = A2AServer(agent, card=card, backend=backend)

The task store, the event log (Redis Streams), the push configs and the push queue are
shared; the server's service runs the stream notifier, the push worker, the cancel
listener, the ownership lease and the reaper of dead replicas. See ``docs/scale-out.md``.
The Redis client is redis-py's asyncio client, so the server runs on asyncio (not trio).
"""

from importlib.metadata import version as _version

from ._common import StoreUnavailableError
from .backend import HOST_LOST_TEXT, RESTART_TEXT, RedisBackend
from .events import RedisEventLog
from .push import PushWorker, RedisPushConfigStore, RedisPushQueue
from .store import RedisTaskStore

__version__: str = _version("a2aserve-redis")

__all__ = [
    "__version__",
    "HOST_LOST_TEXT",
    "RESTART_TEXT",
    "PushWorker",
    "RedisBackend",
    "RedisEventLog",
    "RedisPushConfigStore",
    "RedisPushQueue",
    "RedisTaskStore",
    "StoreUnavailableError",
]
