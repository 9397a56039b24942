"""The README's main command (examples/mnist/main.py, 8 epochs), ember vs torch, phase by phase.

Each library runs alone in its own process (ember's and torch's processes alternate: ember, torch, torch,
ember, ...). A child executes the example's own source (for torch with its imports swapped, as a user would
run it on torch) and times its phases with the example's own functions and objects:

- import: executing the module's top (numpy, tqdm, the library, nn, functional, data);
- data: `load_data` (np.load, float conversion, normalisation, TensorDatasets);
- setup: loaders, the Net, Adam, StepLR;
- batches: fetching the training batches through tqdm (sampler, dataset indexing, collate, the bar);
- conv forward: the two Conv2d modules' forward (timed by wrapping their `forward`);
- rest forward: the other layers (relu, max_pool2d, flatten, dropout, linears);
- loss, backward, step (Adam), zero_grad, bookkeeping (`loss.item()` twice, `set_postfix`);
- eval: `evaluate` (no_grad: the test loader, forward, cross_entropy sum, argmax, eq, sum, item), nine calls;
- epoch end: StepLR step, print, `torch.save` of the checkpoint.

Clock: CPU time. At 1 thread the main thread's (time.thread_time), which a loaded machine hardly moves; at
the default thread count (the number of physical cores) the whole process's (time.process_time), which also
counts idle threads that spin (torch's OpenMP pool does), so wall time is printed beside the total. The table
is the median over processes of each phase's seconds, summed over the run.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 benchmarks/mnist_phases.py [--procs N] [--epochs N]
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPT = os.path.join(ROOT, "examples", "mnist", "main.py")
PHASES = ["import", "data", "setup", "batches", "conv forward", "rest forward", "loss", "backward", "step",
          "zero_grad", "bookkeeping", "eval", "epoch end"]


def torch_source(src):
    """The example's source with `ember` imports replaced by `torch` ones (as benchmarks/examples_e2e.py)."""
    src = src.replace("import ember as torch", "import torch")
    return re.sub(r"\bember\.", "torch.", src).replace("from ember", "from torch")


def child(lib, threads, epochs, workdir):
    clock = time.thread_time if threads == 1 else time.process_time
    acc = dict.fromkeys(PHASES, 0.0)
    wall0 = time.perf_counter()
    with open(SCRIPT) as f:
        src = f.read()
    if lib == "torch":
        src = torch_source(src)
    mod = {"__name__": "mnist_example", "__file__": SCRIPT}
    t = clock()
    exec(compile(src, SCRIPT, "exec"), mod)
    acc["import"] = clock() - t
    L, F = mod["torch"], mod["F"]
    if threads == 1:
        L.set_num_threads(1)

    L.manual_seed(1)
    t = clock()
    train_set, test_set = mod["load_data"](os.path.join(ROOT, "examples", "data", "mnist_5k.npz"))
    acc["data"] = clock() - t
    t = clock()
    train_loader = mod["DataLoader"](train_set, batch_size=64, shuffle=True)
    test_loader = mod["DataLoader"](test_set, batch_size=500)
    model = mod["Net"]()
    optimizer = L.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = L.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    acc["setup"] = clock() - t

    for conv in (model.conv1, model.conv2):  # time the convolutions apart from the rest of the forward
        def timed(x, _forward=conv.forward):
            s = clock()
            y = _forward(x)
            acc["conv forward"] += clock() - s
            return y
        conv.forward = timed

    tqdm = mod["tqdm"]
    for epoch in range(1, epochs + 1):
        model.train()
        bar = tqdm(train_loader, desc=f"epoch {epoch}", leave=False, dynamic_ncols=True)
        it = iter(bar)
        total, seen = 0.0, 0
        while True:
            t0 = clock()
            try:
                data, target = next(it)
            except StopIteration:
                acc["batches"] += clock() - t0
                break
            t1 = clock()
            optimizer.zero_grad()
            t2 = clock()
            c = acc["conv forward"]
            out = model(data)
            t3 = clock()
            loss = F.cross_entropy(out, target)
            t4 = clock()
            loss.backward()
            t5 = clock()
            optimizer.step()
            t6 = clock()
            total += loss.item() * len(target)
            seen += len(target)
            bar.set_postfix(loss=f"{loss.item():.4f}")
            t7 = clock()
            acc["batches"] += t1 - t0
            acc["zero_grad"] += t2 - t1
            acc["rest forward"] += t3 - t2 - (acc["conv forward"] - c)
            acc["loss"] += t4 - t3
            acc["backward"] += t5 - t4
            acc["step"] += t6 - t5
            acc["bookkeeping"] += t7 - t6
        t = clock()
        scheduler.step()
        test_loss, accuracy = mod["evaluate"](model, test_loader)
        t1 = clock()
        print(f"epoch {epoch}: train loss {total / seen:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {accuracy:.2%}", file=sys.stderr)
        L.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch}, os.path.join(workdir, f"{lib}.pt"))
        acc["eval"] += t1 - t
        acc["epoch end"] += clock() - t1
    t = clock()
    _, accuracy = mod["evaluate"](model, test_loader)
    acc["eval"] += clock() - t
    acc["wall"] = time.perf_counter() - wall0
    acc["accuracy"] = accuracy
    print(json.dumps(acc))


def main():
    procs = int(sys.argv[sys.argv.index("--procs") + 1]) if "--procs" in sys.argv else 2
    epochs = int(sys.argv[sys.argv.index("--epochs") + 1]) if "--epochs" in sys.argv else 8
    sys.path.insert(0, HERE)
    sys.path.insert(0, ROOT)
    import tempfile

    import ember

    default = ember._runtime._physical_cores()
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                           "OPENBLAS_NUM_THREADS")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    print(f"examples/mnist/main.py, {epochs} epochs, each library alone, median of {procs} processes each; "
          f"load {os.getloadavg()[0]:.1f}")
    for threads in sorted({1, default}):
        e = dict(env)
        if threads == 1:
            e.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        res = {"ember": [], "torch": []}
        with tempfile.TemporaryDirectory() as d:
            for p in range(procs):
                for lib in ("ember", "torch") if p % 2 == 0 else ("torch", "ember"):
                    out = subprocess.run([sys.executable, __file__, "--child", lib, str(threads), str(epochs), d],
                                         capture_output=True, text=True, env=e, cwd=d)
                    if out.returncode:
                        raise RuntimeError(out.stderr[-3000:])
                    res[lib].append(json.loads(out.stdout.strip().splitlines()[-1]))
        clock = "main thread CPU (thread_time)" if threads == 1 else "process CPU (process_time)"
        print(f"\n{threads} thread{'s' * (threads > 1)} ({'default' if threads == default else 'set'}), "
              f"seconds of {clock}; load {os.getloadavg()[0]:.1f}")
        print(f"{'phase':<14} {'ember':>8} {'torch':>8} {'e - t':>7}")
        med = {lib: {k: statistics.median(r[k] for r in res[lib]) for k in PHASES + ["wall", "accuracy"]}
               for lib in res}
        for k in PHASES:
            print(f"{k:<14} {med['ember'][k]:8.3f} {med['torch'][k]:8.3f} {med['ember'][k] - med['torch'][k]:7.3f}")
        te, tt = (sum(med[lib][k] for k in PHASES) for lib in ("ember", "torch"))
        print(f"{'total':<14} {te:8.3f} {tt:8.3f} {te - tt:7.3f}   ratio {te / tt:.2f}x")
        print(f"{'wall':<14} {med['ember']['wall']:8.3f} {med['torch']['wall']:8.3f}   "
              f"(final accuracy {med['ember']['accuracy']:.2%} / {med['torch']['accuracy']:.2%})", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        main()
