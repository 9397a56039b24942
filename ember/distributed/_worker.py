"""The launcher's per-rank wrapper: `python -m ember.distributed._worker [--alias] [-m] SCRIPT ARGS...`.

mpiexec starts one per rank. It records the rank's pid and, at the end, its exit code in the rank's run
directory (the directory of TORCHELASTIC_ERROR_FILE), where the launcher watches for a failed or vanished
rank (NOTE [ Stopping the job when a rank fails ] in run.py); prefixes the rank's output lines with
`[default<local_rank>]:` when asked (EMBER_RUN_PREFIX, torchrun's `--tee`) and copies them to the rank's log
files (EMBER_RUN_LOG_DIR, torchrun's `--log-dir`); then runs the script as `__main__` (with `import torch`
resolving to ember under `ember run`, `--alias`).
"""

import os
import runpy
import signal
import sys
import threading
import traceback


def _prefix_stream(fd, prefix, log_path):
    """Route file descriptor `fd` through a pipe whose lines are written back prefixed (and logged)."""
    read_end, write_end = os.pipe()
    original = os.dup(fd)
    os.dup2(write_end, fd)
    os.close(write_end)
    log = open(log_path, "ab") if log_path else None

    def pump():
        pending = b""
        with os.fdopen(read_end, "rb", buffering=0) as src:
            while True:
                chunk = src.read(65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if log:
                        log.write(line + b"\n")
                        log.flush()
                    if prefix is not None:
                        os.write(original, prefix + line + b"\n")
        if pending:
            if log:
                log.write(pending)
            if prefix is not None:
                os.write(original, prefix + pending + b"\n")
        if log:
            log.close()
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t, original


def _redirect_output(local_rank):
    prefix = os.environ.get("EMBER_RUN_PREFIX")
    log_dir = os.environ.get("EMBER_RUN_LOG_DIR")
    if prefix is None and not log_dir:
        return []
    tag = prefix.encode() if prefix is not None else None
    pumps = []
    for fd, name in ((1, "stdout.log"), (2, "stderr.log")):
        pumps.append(_prefix_stream(fd, tag, os.path.join(log_dir, name) if log_dir else None))
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    return pumps


def _finish(pumps):
    """Close the pipes' write ends so the pumps drain, and wait for them."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for (thread, original), fd in zip(pumps, (1, 2)):
        os.dup2(original, fd)
        thread.join(timeout=5)


def main(argv):
    alias = argv and argv[0] == "--alias"
    if alias:
        argv = argv[1:]
    as_module = argv and argv[0] == "-m"
    if as_module:
        argv = argv[1:]
    run_dir = os.path.dirname(os.environ.get("TORCHELASTIC_ERROR_FILE", "")) or None
    if run_dir:
        os.makedirs(run_dir, exist_ok=True)
        with open(os.path.join(run_dir, "pid"), "w") as fh:
            fh.write(str(os.getpid()))
    try:  # end with the launcher if it is killed (its mpiexec is, and the ranks run in their own sessions)
        import ctypes

        ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    pumps = _redirect_output(os.environ.get("LOCAL_RANK", "0"))
    if alias:
        from .._torch_alias import install

        install()
    sys.argv = list(argv)
    code = 0
    try:
        if as_module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported as Python would, then the exit code says it failed
        traceback.print_exc()
        code = 1
    if run_dir:
        with open(os.path.join(run_dir, "exitcode"), "w") as fh:
            fh.write(str(code))
    _finish(pumps)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
