"""A small PMI-1 server: how processes that mpiexec did not start become one MPI_COMM_WORLD.

NOTE [ Joining processes that mpiexec did not start ]
A script that starts its own ranks (`torch.multiprocessing.spawn` + `init_process_group(rank=r,
world_size=n)`) gives MPI n unrelated processes. Each initializes MPI as a *singleton* (a world of one),
and MPI's dynamic process management (`Open_port` / `Comm_accept` / `Comm_connect`, then
`Intercomm_merge`) is the standard way to join such worlds. It works between worlds that mpiexec started,
but not between singletons of the MPICH in use (5.0.x): a singleton's PMI client names its world
"singinit" whatever the process (`PMI_KVS_Get_my_name` in MPICH's src/pmi/src/pmi_v1.c), so the
second singleton's world looks like the first one's, and the accept fails in `MPIDI_check_disjoint_lpids`
("Local and remote groups in MPI_Intercomm_create must not overlap"; reported upstream as
pmodels/mpich#7805). So ember does what mpiexec does instead: MPI learns its rank, size and peers'
addresses from a process manager through the PMI protocol, and a process finds its process manager
through the environment (`PMI_PORT=host:port`, `PMI_RANK`, `PMI_SIZE`). Rank 0 starts this server in a
child process, publishes its port through the job's store, and every rank sets those variables before
MPI starts; MPI_Init then builds one MPI_COMM_WORLD of the n processes, as under mpiexec. The server is
a separate process because MPI_Init holds the GIL while it waits on the PMI barrier (a thread of rank
0 could not answer). It exits once every rank has finalized and closed its connection, or when its
parent closes its stdin.

The protocol is PMI-1's text wire format (`cmd=put kvsname=... key=... value=...`), the commands MPICH's
client sends: init, get_maxes, get_appnum, get_my_kvsname, get_universe_size, put, get, barrier_in,
finalize, abort. `PMI_process_mapping` (which ranks share a node, for shared-memory transport) is
answered from the hosts the ranks reported.
"""

import os
import selectors
import socket
import sys

__all__ = ["serve", "process_mapping"]


def process_mapping(node_of_rank):
    """PMI's `(vector,(node,nodes,ranks_per_node),...)` for ranks given the node index of each."""
    blocks = []
    for node in node_of_rank:
        if blocks and blocks[-1][0] == node:
            blocks[-1][2] += 1
        else:
            blocks.append([node, 1, 1])
    return "(vector," + ",".join(f"({a},{b},{c})" for a, b, c in blocks) + ")"


def _parse(line):
    out = {}
    for tok in line.split(" "):
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def serve(size, kvsname, mapping, listen_host="0.0.0.0"):
    """Serve PMI-1 for `size` ranks; print the port on stdout first. Returns when all finalized."""
    server = socket.create_server((listen_host, 0), backlog=size + 8)
    print(server.getsockname()[1], flush=True)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ)
    try:
        sel.register(sys.stdin, selectors.EVENT_READ)  # EOF: the parent is gone
    except (OSError, ValueError):  # stdin is not a pipe (a manual run)
        pass
    kvs = {"PMI_process_mapping": mapping}
    buffers, barrier, finalized = {}, [], 0

    def reply(conn, text):
        conn.sendall((text + "\n").encode())

    connections = 0
    while finalized < size or connections:
        for key, _ in sel.select():
            if key.fileobj is server:
                conn, _ = server.accept()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                buffers[conn] = b""
                connections += 1
                sel.register(conn, selectors.EVENT_READ)
                continue
            if key.fileobj is sys.stdin:
                if not os.read(sys.stdin.fileno(), 4096):
                    return
                continue
            conn = key.fileobj
            data = conn.recv(65536)
            if not data:
                connections -= 1
                sel.unregister(conn)
                buffers.pop(conn, None)
                conn.close()
                continue
            buffers[conn] += data
            while b"\n" in buffers[conn]:
                line, buffers[conn] = buffers[conn].split(b"\n", 1)
                msg = _parse(line.decode().strip())
                cmd = msg.get("cmd")
                if cmd == "initack":  # PMI_ID handshake: rank and size come from the server
                    reply(conn, f"cmd=initack rc=0\ncmd=set size={size}\ncmd=set rank={msg.get('pmiid')}\n"
                                "cmd=set debug=0")
                elif cmd == "init":
                    reply(conn, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
                elif cmd == "get_maxes":
                    reply(conn, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024 rc=0")
                elif cmd == "get_appnum":
                    reply(conn, "cmd=appnum appnum=0 rc=0")
                elif cmd == "get_my_kvsname":
                    reply(conn, f"cmd=my_kvsname kvsname={kvsname} rc=0")
                elif cmd == "get_universe_size":
                    reply(conn, f"cmd=universe_size size={size} rc=0")
                elif cmd == "put":
                    kvs[msg.get("key")] = msg.get("value", "")
                    reply(conn, "cmd=put_result rc=0")
                elif cmd == "get":
                    k = msg.get("key")
                    if k in kvs:
                        reply(conn, f"cmd=get_result value={kvs[k]} rc=0")
                    else:
                        reply(conn, f"cmd=get_result rc=-1 msg=key_{k}_not_found")
                elif cmd == "barrier_in":
                    barrier.append(conn)
                    if len(barrier) == size:
                        for c in barrier:
                            reply(c, "cmd=barrier_out rc=0")
                        barrier.clear()
                elif cmd == "finalize":
                    reply(conn, "cmd=finalize_ack rc=0")
                    finalized += 1
                elif cmd == "abort":
                    return
                else:
                    reply(conn, f"cmd={cmd}_result rc=-1 msg=unsupported")


if __name__ == "__main__":
    # python -m ember.distributed._pmi SIZE KVSNAME MAPPING
    serve(int(sys.argv[1]), sys.argv[2], sys.argv[3])
