"""redis-py's Sentinel client against Firn (tests/sentinel.rs runs this).

Usage: client.py <sentinel port>...

Asks the sentinels for mymaster's primary with
redis.sentinel.Sentinel.master_for, writes and reads through it, then reads
through slave_for from a replica, and prints what it found:

    master <port>
    replica <port>

Any failure raises, so the exit status is not 0 and the test fails.
"""

import sys
import time

from redis.sentinel import Sentinel

ports = [int(p) for p in sys.argv[1:]]
sentinel = Sentinel([("127.0.0.1", p) for p in ports], socket_timeout=2)

master = sentinel.master_for("mymaster", socket_timeout=2)
assert master.set("written-by-redis-py", "through master_for")
assert master.get("written-by-redis-py") == b"through master_for"
role = master.execute_command("ROLE")
assert role[0] == b"master", role
host, master_port = master.connection_pool.get_master_address()
print("master", master_port)

# slave_for falls back to the primary when Sentinel lists no usable
# replica: ROLE proves the reads come from a replica.
replica = sentinel.slave_for("mymaster", socket_timeout=2)
role = replica.execute_command("ROLE")
assert role[0] == b"slave", role
assert role[2] == master_port, (role, master_port)
deadline = time.monotonic() + 10
while replica.get("written-by-redis-py") != b"through master_for":
    assert time.monotonic() < deadline, "the write never reached the replica"
    time.sleep(0.05)
print("replica", replica.config_get("port")["port"])
