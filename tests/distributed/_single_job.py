"""One process, world_size 1, for tests/distributed/test_failures.py: `init_process_group` with each
init_method (file://, tcp://) and backend ("gloo"; "nccl", which a CPU-only torch refuses; "mpi", which
torch's wheels lack and ember runs on MPI), a PRODUCT all_reduce and the group's queries; prints one JSON
object. `python _single_job.py torch|ember PORT`."""

import json
import sys
import tempfile
import warnings


def main(lib_name, port):
    warnings.simplefilter("ignore")
    if lib_name == "torch":
        import torch as lib
    else:
        import ember as lib
    d = lib.distributed
    tmp = tempfile.mkdtemp()

    def outcome(fn):
        try:
            return ["ok", fn()]
        except Exception as e:  # noqa: BLE001 - compared by the test
            return [type(e).__name__, str(e).split("\n")[0]]

    def run(backend, method):
        d.init_process_group(backend, init_method=method, rank=0, world_size=1)
        x = lib.arange(1.0, 5.0)
        d.all_reduce(x, op=d.ReduceOp.PRODUCT)
        row = [d.get_backend(), d.get_rank(), d.get_world_size(), d.is_initialized(), x.tolist()]
        d.destroy_process_group()
        return row

    out = {"gloo file://": outcome(lambda: run("gloo", f"file://{tmp}/f1")),
           "gloo tcp://": outcome(lambda: run("gloo", f"tcp://127.0.0.1:{port}")),
           "nccl": outcome(lambda: run("nccl", f"file://{tmp}/f2")),
           "initialized after nccl": d.is_initialized(),
           "mpi": outcome(lambda: run("mpi", f"file://{tmp}/f3"))}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
