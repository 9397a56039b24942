"""torch.distributed's key-value stores: `Store`, `TCPStore`, `FileStore`, `HashStore`, `PrefixStore`.

A store is how ranks find each other before they can talk (the rendezvous) and how they exchange small
things outside collectives (MPI port names, group names, `monitored_barrier` check-ins). Values are bytes;
`set` takes str or bytes; `get` waits for the key up to the store's timeout.

NOTE [ The TCP store's server ]
torch's TCPStore server is a C++ thread. Here it is a Python thread per client connection (`_Server`),
serving a dict under one condition variable; a client's `wait`/`get` blocks its server thread on the
condition, never the whole server. Messages are length-prefixed pickles of `(op, args)` (the peers are
the job's own processes, as with torch's wire format, which is not authenticated either). Blocking MPI
calls release the GIL, so a rank hosting the server keeps serving while it waits in a collective.

Errors are torch's: a timeout is `DistStoreError` ("wait timeout after 100ms, keys: /a" for the TCP store,
"Wait timeout" for the hash store), `FileStore.get` raises RuntimeError "Timeout waiting for key: a after
100 ms", `add` on a value that is not an integer raises ValueError "stoll".
"""

import datetime
import fcntl
import os
import pickle
import socket
import struct
import threading
import time

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "DistError", "DistStoreError",
           "DistNetworkError", "DistBackendError"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a backend error occurs in distributed."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class DistNetworkError(DistError):
    """Raised when a network error occurs in distributed."""


def _bytes(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)):  # torch accepts a list of ints (std::vector<uint8_t>)
        return bytes(value)
    raise TypeError(f"incompatible value type {type(value).__name__}: expected str or bytes")


def _ms(td):
    return int(round(td.total_seconds() * 1000))


def _add(table, key, amount):
    """`add` on a dict of bytes: the counter is stored as decimal text, as torch stores it."""
    old = table.get(key, b"0")
    try:
        value = int(old.decode()) + int(amount)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("stoll") from None
    table[key] = str(value).encode()
    return value


def _compare_set(table, key, expected, desired):
    current = table.get(key)
    if current is None:
        if expected == b"":
            table[key] = desired
            return desired
        return expected
    if current == expected:
        table[key] = desired
        return desired
    return current


class Store:
    """Base class for all store implementations (torch.distributed.Store)."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    @property
    def timeout(self):
        """The store's default timeout for `get` and `wait`, a `datetime.timedelta`."""
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def has_extended_api(self):
        return True

    def _wait_timeout(self, keys, timeout):
        raise DistStoreError("Wait timeout")


class _TableStore(Store):
    """A store over a dict guarded by a condition variable (the hash store, and the TCP server's state)."""

    def __init__(self):
        super().__init__()
        self._table = {}
        self._cv = threading.Condition()

    def set(self, key, value):
        with self._cv:
            self._table[key] = _bytes(value)
            self._cv.notify_all()

    def _wait_locked(self, keys, timeout):
        deadline = time.monotonic() + (self._timeout if timeout is None else timeout).total_seconds()
        while not all(k in self._table for k in keys):
            left = deadline - time.monotonic()
            if left <= 0:
                self._wait_timeout(keys, self._timeout if timeout is None else timeout)
            self._cv.wait(left)

    def get(self, key):
        with self._cv:
            self._wait_locked([key], None)
            return self._table[key]

    def wait(self, keys, timeout=None):
        with self._cv:
            self._wait_locked(list(keys), timeout)

    def add(self, key, amount):
        with self._cv:
            value = _add(self._table, key, amount)
            self._cv.notify_all()
            return value

    def append(self, key, value):
        with self._cv:
            self._table[key] = self._table.get(key, b"") + _bytes(value)
            self._cv.notify_all()

    def compare_set(self, key, expected_value, desired_value):
        with self._cv:
            out = _compare_set(self._table, key, _bytes(expected_value), _bytes(desired_value))
            self._cv.notify_all()
            return out

    def check(self, keys):
        with self._cv:
            return all(k in self._table for k in keys)

    def delete_key(self, key):
        with self._cv:
            return self._table.pop(key, None) is not None

    def num_keys(self):
        with self._cv:
            return len(self._table)


class HashStore(_TableStore):
    """A thread-safe store in this process's memory (torch.distributed.HashStore)."""


# ---------------------------------------------------------------------------------------------------------
# TCPStore: NOTE [ The TCP store's server ]

def _send_msg(sock, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise DistNetworkError("Failed to recv, got 0 bytes. Connection was likely closed. "
                                   "Did the remote server shutdown or crash?")
        buf += chunk
    return bytes(buf)


def _recv_msg(sock):
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


class _TimedOut(Exception):
    pass


class _ServerState(_TableStore):
    def _wait_timeout(self, keys, timeout):
        raise _TimedOut()


class _Server:
    """The TCP store's server: a listening socket and one daemon thread per client."""

    def __init__(self, host, port, listen_fd=None):
        self.state = _ServerState()
        if listen_fd is not None:
            self.sock = socket.socket(fileno=listen_fd)
        else:
            self.sock = socket.create_server(("" if host in ("", "0.0.0.0") else host, port),
                                             family=socket.AF_INET, reuse_port=False, backlog=1024)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept_loop, daemon=True, name="ember-tcpstore").start()

    def _accept_loop(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        s = self.state
        ops = {"set": s.set, "get": s.get, "add": s.add, "append": s.append, "check": s.check,
               "compare_set": s.compare_set, "delete_key": s.delete_key, "num_keys": s.num_keys,
               "multi_get": s.multi_get, "multi_set": s.multi_set}
        with conn:
            while True:
                try:
                    op, args, timeout_ms = _recv_msg(conn)
                except (DistNetworkError, OSError, EOFError):
                    return
                try:
                    if op in ("wait", "get", "multi_get"):
                        keys = args[0] if op != "get" else [args[0]]
                        with s._cv:
                            s._wait_locked(keys, datetime.timedelta(milliseconds=timeout_ms))
                    reply = ("ok", None if op == "wait" else ops[op](*args))
                except _TimedOut:
                    reply = ("timeout", None)
                except ValueError as e:
                    reply = ("value_error", str(e))
                try:
                    _send_msg(conn, reply)
                except OSError:
                    return

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class TCPStore(Store):
    """A TCP-based distributed key-value store (torch.distributed.TCPStore).

    Args:
        host_name (str): the hostname or IP address the server listens on / clients connect to.
        port (int): the port (0 on the master picks a free one; read it back from `.port`).
        world_size (int, optional): the number of store users (the master waits for them if
            `wait_for_workers`).
        is_master (bool): whether this instance hosts the server.
        timeout (timedelta): the timeout of `get`/`wait` and of connecting.
        wait_for_workers (bool): whether the master waits for all `world_size` users to connect.
        multi_tenant, use_libuv: accepted for torch compatibility.
        master_listen_fd (int, optional): a listening socket the server takes over.

    Example::

        >>> server = TCPStore("127.0.0.1", 0, 1, True)
        >>> server.set("first_key", "first_value")
        >>> server.get("first_key")
        b'first_value'
    """

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=_DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__()
        self._timeout = timeout
        self.host = host_name
        self.libuvBackend = bool(use_libuv)
        self._server = _Server(host_name, port, master_listen_fd) if is_master else None
        self.port = self._server.port if is_master else port
        self._lock = threading.Lock()
        self._sock = self._connect(timeout)
        self._call("add", ("init/", 1))
        if is_master and wait_for_workers and world_size:
            self._wait_workers(world_size, timeout)

    def _connect(self, timeout):
        deadline = time.monotonic() + timeout.total_seconds()
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        while True:
            try:
                sock = socket.create_connection((host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(f"The client socket has timed out after {_ms(timeout)}ms while "
                                           f"trying to connect to ({host}, {self.port}).") from None
                time.sleep(0.05)

    def _wait_workers(self, world_size, timeout):
        deadline = time.monotonic() + timeout.total_seconds()
        while int(self._call("add", ("init/", 0))) < world_size:
            if time.monotonic() >= deadline:
                raise DistStoreError(f"Timed out after {int(timeout.total_seconds())} seconds waiting for "
                                     f"clients. {int(self._call('add', ('init/', 0)))}/{world_size} clients "
                                     "joined.")
            time.sleep(0.01)

    def _call(self, op, args, timeout=None):
        t = self._timeout if timeout is None else timeout
        with self._lock:
            try:
                _send_msg(self._sock, (op, args, _ms(t)))
                status, value = _recv_msg(self._sock)
            except OSError as e:
                raise DistNetworkError(str(e)) from None
        if status == "timeout":
            keys = [args[0]] if op == "get" else list(args[0])
            raise DistStoreError(f"wait timeout after {_ms(t)}ms, keys: " + ", ".join("/" + k for k in keys))
        if status == "value_error":
            raise ValueError(value)
        return value

    def set(self, key, value):
        self._call("set", (key, _bytes(value)))

    def get(self, key):
        return self._call("get", (key,))

    def add(self, key, amount):
        return self._call("add", (key, int(amount)))

    def append(self, key, value):
        self._call("append", (key, _bytes(value)))

    def compare_set(self, key, expected_value, desired_value):
        return self._call("compare_set", (key, _bytes(expected_value), _bytes(desired_value)))

    def wait(self, keys, timeout=None):
        self._call("wait", (list(keys),), timeout)

    def check(self, keys):
        return self._call("check", (list(keys),))

    def delete_key(self, key):
        return self._call("delete_key", (key,))

    def num_keys(self):
        return self._call("num_keys", ())

    def multi_get(self, keys):
        return self._call("multi_get", (list(keys),))

    def multi_set(self, keys, values):
        self._call("multi_set", (list(keys), [_bytes(v) for v in values]))

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()
        if getattr(self, "_server", None) is not None:
            self._server.close()


# ---------------------------------------------------------------------------------------------------------
# FileStore: a pickled dict in a file, read and rewritten under an exclusive lock (fcntl.flock).

class FileStore(Store):
    """A store over a file shared by the processes (torch.distributed.FileStore).

    Args:
        file_name (str): path of the file in which to store the key-value pairs.
        world_size (int, optional): the number of processes using the store (default -1, unknown).
    """

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o644)
        os.close(fd)

    def _locked(self, fn, write):
        with open(self.path, "r+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            try:
                raw = fh.read()
                table = pickle.loads(raw) if raw else {}
                out = fn(table)
                if write:
                    fh.seek(0)
                    fh.truncate()
                    fh.write(pickle.dumps(table))
                    fh.flush()
                return out
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _poll(self, keys, timeout, on_timeout):
        deadline = time.monotonic() + timeout.total_seconds()
        delay = 0.001
        while True:
            table = self._locked(lambda t: {k: t[k] for k in keys if k in t}, False)
            if len(table) == len(keys):
                return table
            if time.monotonic() >= deadline:
                on_timeout()
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def set(self, key, value):
        v = _bytes(value)
        self._locked(lambda t: t.__setitem__(key, v), True)

    def get(self, key):
        def timeout():
            raise RuntimeError(f"Timeout waiting for key: {key} after {_ms(self._timeout)} ms")
        return self._poll([key], self._timeout, timeout)[key]

    def wait(self, keys, timeout=None):
        def on_timeout():
            raise RuntimeError("Wait timeout")
        self._poll(list(keys), self._timeout if timeout is None else timeout, on_timeout)

    def add(self, key, amount):
        return self._locked(lambda t: _add(t, key, amount), True)

    def append(self, key, value):
        v = _bytes(value)
        self._locked(lambda t: t.__setitem__(key, t.get(key, b"") + v), True)

    def compare_set(self, key, expected_value, desired_value):
        e, d = _bytes(expected_value), _bytes(desired_value)
        return self._locked(lambda t: _compare_set(t, key, e, d), True)

    def check(self, keys):
        return self._locked(lambda t: all(k in t for k in keys), False)

    def delete_key(self, key):
        return self._locked(lambda t: t.pop(key, None) is not None, True)

    def num_keys(self):
        return self._locked(len, False)


class PrefixStore(Store):
    """A wrapper adding `prefix + "/"` to every key before it reaches `store` (torch.distributed.PrefixStore)."""

    def __init__(self, prefix, store):
        super().__init__()
        self.prefix = prefix
        self.underlying_store = store
        self._timeout = store.timeout

    def _k(self, key):
        return f"{self.prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def append(self, key, value):
        self.underlying_store.append(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._k(k) for k in keys])

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._k(k) for k in keys], values)
