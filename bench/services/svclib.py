"""Helpers shared by the issue-3 benchmarks (coupling.py, mpi_overhead.py, mixed.py): where the
programs are, how `chorus run` is driven and timed, what its journal says about task spans, and
the exact command Chorus runs for a local MPI task (adapters/mpi/mpi_command.cpp)."""
import glob
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402  (bench/benchlib.py: median, timed, write_result)

HERE = os.path.dirname(os.path.abspath(__file__))


def loadavg():
    return [round(x, 2) for x in os.getloadavg()]


def program(build, *parts):
    path = os.path.join(build, *parts)
    if not os.access(path, os.X_OK):
        sys.exit(f"{path} is missing: cmake --build {build} -j2 --target chorus_cli coupling_client "
                 "coupling_echo mpi_hello")
    return path


def mpi_spin(build, work):
    """build/bench/services/mpi_spin when bench/CMakeLists.txt builds bench/services, else the same
    source compiled here with mpicc (same flags as the project's C programs)."""
    built = os.path.join(build, "bench", "services", "mpi_spin")
    if os.access(built, os.X_OK):
        return built
    out = os.path.join(work, "mpi_spin")
    subprocess.run(["mpicc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    os.path.join(HERE, "mpi_spin.c"), "-o", out], check=True)
    return out


def mpirun_argv(ranks, cmd):
    """MpirunCommand::argv for a task of `ranks` ranks of 1 core each (no extra arguments, as
    api/run_workflow.cpp constructs it)."""
    return ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] + list(cmd)


def mpirun_env():
    """The environment a Chorus MPI task gets: the coordinator's plus MpirunCommand::env()."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def yaml_list(argv):
    return "[" + ", ".join('"' + a.replace("\\", "\\\\").replace('"', '\\"') + '"' for a in argv) + "]"


def chorus_run(chorus, workflow, state, cores=None, cwd=None):
    """Runs `chorus run` with a fresh state folder; returns (wall seconds, argv). Raises when the
    run does not succeed."""
    shutil.rmtree(state, ignore_errors=True)
    argv = [chorus, "run", workflow, "--state", state]
    if cores is not None:
        argv += ["--cores", str(cores)]
    dt, _ = benchlib.timed(argv, cwd=cwd or os.path.dirname(workflow))
    return dt, argv


def journal(state):
    """{task name: {"kind", "start", "end", "state", "detail"}} of the only run in `state`, from
    the SQLite journal: start = first `running` event, end = the last event's time."""
    db = sqlite3.connect(os.path.join(state, "chorus.db"))
    tasks = {}
    for name, st, t, kind, detail in db.execute(
            "SELECT name, state, time, kind, detail FROM events ORDER BY seq"):
        rec = tasks.setdefault(name, {"kind": kind, "start": None, "end": None, "state": None,
                                      "detail": None})
        if st == "running" and rec["start"] is None:
            rec["start"] = t
        rec["end"], rec["state"] = t, st
        if detail:
            rec["detail"] = detail
    db.close()
    return tasks


def span(tasks, prefix):
    """(first start, last end, count) of the tasks whose name starts with `prefix`."""
    sel = [r for n, r in tasks.items() if n.startswith(prefix)]
    return min(r["start"] for r in sel), max(r["end"] for r in sel), len(sel)


def logs(state, pattern):
    return sorted(glob.glob(os.path.join(state, "runs", "*", "logs", pattern)))


def command_line():
    return "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], os.getcwd())]
                                 + sys.argv[1:])


def git_head(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return out + (" (+ uncommitted changes in the tree)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def now():
    return time.perf_counter()
