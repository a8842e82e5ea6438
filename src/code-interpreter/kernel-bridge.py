"""One code-interpreter context's kernel, driven for the TypeScript server (server.ts) over pipes.

python: an IPython kernel (Debian's ipykernel) spoken to over Jupyter's ZeroMQ wire with jupyter_client.
bash: an interactive bash on a pseudo-terminal (pexpect's REPL wrapper), so Ctrl-C stops what runs and bash lives.

Requests arrive as JSON lines on stdin: {"id", "code", "envs"}. Events go out as JSON lines on fd 3 (stdout and
stderr stay the server's log): {"type": "ready"} once, then per request stdout/stderr/result/error/count events and
{"type": "done"} last. SIGINT interrupts what runs. When the kernel dies the bridge reports it and exits: the server
starts a new one.
"""

import json
import os
import queue
import signal
import sys

EVENTS = os.fdopen(3, "w", buffering=1)


def emit(event):
    EVENTS.write(json.dumps(event) + "\n")


def shell_quote(value):
    return "'" + value.replace("'", "'\\''") + "'"


class PythonKernel:
    # Figures come back as PNG and SVG, as the code interpreter's clients expect both.
    SETUP = "%config InlineBackend.figure_formats = ['png', 'svg']"

    def __init__(self, cwd):
        from jupyter_client.manager import KernelManager

        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        # ipykernel's debugger otherwise warns about Debian's frozen modules at every start.
        os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.silent(self.SETUP)

    def interrupt(self):
        self.km.interrupt_kernel()

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def silent(self, code):
        msg_id = self.kc.execute(code, silent=True, store_history=False)
        self.drain(msg_id, None)

    def run(self, rid, code, envs):
        if envs:
            self.silent(
                "import os as _sk_os\n_sk_saved = {k: _sk_os.environ.get(k) for k in %r}\n_sk_os.environ.update(%r)"
                % (list(envs), envs)
            )
        try:
            msg_id = self.kc.execute(code, store_history=True, allow_stdin=False)
            self.drain(msg_id, rid)
        finally:
            if envs and self.km.is_alive():
                self.silent(
                    "for _k, _v in _sk_saved.items():\n"
                    "    _sk_os.environ.pop(_k, None) if _v is None else _sk_os.environ.__setitem__(_k, _v)\n"
                    "del _sk_saved, _k, _v"
                )

    def drain(self, msg_id, rid):
        """Forwards the execution's output (rid None: swallows it) until the kernel is idle again."""
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                if not self.km.is_alive():
                    raise KernelDied("the kernel died while running the code")
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                return
            if rid is None:
                continue
            if kind == "stream":
                emit({"id": rid, "type": "stdout" if content["name"] == "stdout" else "stderr", "text": content["text"]})
            elif kind in ("execute_result", "display_data"):
                emit({"id": rid, "type": "result", "data": content["data"], "main": kind == "execute_result"})
            elif kind == "error":
                emit(
                    {
                        "id": rid,
                        "type": "error",
                        "name": content["ename"],
                        "value": content["evalue"],
                        "traceback": "\n".join(content["traceback"]),
                    }
                )
            elif kind == "execute_input":
                emit({"id": rid, "type": "count", "n": content["execution_count"]})


class BashKernel:
    def __init__(self, cwd):
        from pexpect import replwrap

        os.chdir(cwd)
        # A dumb terminal: readline then sends no bracketed-paste or colour sequences into the output.
        os.environ["TERM"] = "dumb"
        self.shell = replwrap.bash()
        self.count = 0

    def interrupt(self):
        self.shell.child.sendintr()

    def close(self):
        self.shell.child.close(force=True)

    def run(self, rid, code, envs):
        self.count += 1
        emit({"id": rid, "type": "count", "n": self.count})
        if envs:
            saved = "; ".join("_sk_saved_%d=${%s-__sk_unset__}" % (i, k) for i, k in enumerate(envs))
            exports = "; ".join("export %s=%s" % (k, shell_quote(v)) for k, v in envs.items())
            self.shell.run_command(saved + "; " + exports, timeout=None)
        try:
            output = self.shell.run_command(code.rstrip("\n"), timeout=None)
            status = self.shell.run_command("echo $?", timeout=None).strip().split("\n")[-1].strip()
        finally:
            if envs and self.shell.child.isalive():
                restore = "; ".join(
                    '[ "$_sk_saved_%d" = __sk_unset__ ] && unset %s || export %s="$_sk_saved_%d"; unset _sk_saved_%d'
                    % (i, k, k, i, i)
                    for i, k in enumerate(envs)
                )
                self.shell.run_command(restore, timeout=None)
        if output:
            emit({"id": rid, "type": "stdout", "text": output.replace("\r\n", "\n").replace("\r", "")})
        if status not in ("0", ""):
            emit({"id": rid, "type": "error", "name": "ExitCode", "value": status, "traceback": "exit status " + status})


class KernelDied(Exception):
    pass


def main():
    language, cwd = sys.argv[1], sys.argv[2]
    kernel = PythonKernel(cwd) if language == "python" else BashKernel(cwd)
    signal.signal(signal.SIGINT, lambda *_: kernel.interrupt())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    emit({"type": "ready"})
    try:
        return serve(kernel)
    finally:
        kernel.close()


def serve(kernel):
    for line in sys.stdin:
        request = json.loads(line)
        rid = request["id"]
        try:
            kernel.run(rid, request["code"], request.get("envs") or {})
        except Exception as err:  # the kernel is gone; say so and let the server start another
            emit({"id": rid, "type": "error", "name": "KernelDied", "value": str(err), "traceback": str(err)})
            emit({"id": rid, "type": "done", "dead": True})
            return 1
        emit({"id": rid, "type": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
