"""World size 1 in the runner's own process: the executed tests' runners record what the
training does (compiles, optimizer steps), which a launched child process would hide.

``torch_xla.launch`` runs its function in this process (its own debug_single_process
mode, one device), and ``torch.multiprocessing.spawn`` with one process calls the
function with index 0; both print ``LAUNCHED <launcher>`` so a test can see the script
went through its launcher.
"""

from __future__ import annotations


def run_launchers_in_process() -> None:
    import torch.multiprocessing

    spawn = torch.multiprocessing.spawn

    def spawn_one(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):  # type: ignore[no-untyped-def]
        if nprocs != 1:
            return spawn(fn, args, nprocs, join, daemon, start_method)
        print("LAUNCHED torch.multiprocessing.spawn", flush=True)
        fn(0, *args)
        return None

    torch.multiprocessing.spawn = spawn_one
    try:
        import torch_xla
    except ImportError:  # eager runs without the extra
        return

    launch = torch_xla.launch

    def launch_here(fn, args=(), start_method="spawn", debug_single_process=False):  # type: ignore[no-untyped-def]
        print("LAUNCHED torch_xla.launch", flush=True)
        return launch(fn, args=args, start_method=start_method, debug_single_process=True)

    torch_xla.launch = launch_here
