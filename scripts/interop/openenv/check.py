"""OpenEnv's own clients and `openenv validate` against `agentrl serve-env`, for every environment.

For each environment `agentrl envs` lists, this starts `agentrl serve-env <env> --port 0` on
127.0.0.1 and checks, with openenv-core (requirements.txt) and nothing of agentrl on the Python side:

1. `openenv validate <url>`: the runtime validation of a running server (its 6 criteria: OpenAPI
   version, /health, /metadata, /schema, /mcp, the simulation-mode endpoint set) all pass. Run
   through the CLI's own typer app in this process for every env (the CLI costs ~15 s of imports a
   process), and once as the installed `openenv` console script.
2. GenericEnvClient (WebSocket /ws): episodes of seeds 0 and 1, each action from agentrl's scripted
   expert (expert.ts) reading the observation as the client received it plus the privileged part
   the server never sends (the answer; expert.ts rebuilds it with a local copy of the env that
   follows the episode from its seed), until `done`; the last observation's metadata says
   success, and `state()` counts the steps.
3. MCPToolClient in both its modes: step mode (list_tools / call_tool through /ws) and HTTP mode
   (`use_production_mode`: openenv/session/create, tools/list, tools/call with session_id,
   openenv/session/close over POST /mcp). The tool list is the env's own (expert.ts asks the env);
   for envs with tools, the expert's first tool call of seed 0 runs in both modes and the raw value
   (HTTP mode) is what the env showed the model (step mode).

Every server is stopped on any exit (its process group; also on SIGINT/SIGTERM).
    python check.py [env ...]        (default: every env)
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
AGENTRL = [
    "node",
    str(ROOT / "bin" / "agentrl.js"),
]
SEEDS = (0, 1)
MAX_STEPS = 60
ENV_TIMEOUT_S = 180
# Envs whose tools act inside the env's turn: MCP tools/call runs the declared tool alone, so its
# value is not what the turn shows (both are still checked to answer without error).
TOOLS_ACT_IN_THE_TURN = {"memory-recall": "memory_insert / memory_search are stand-ins that echo; the env keeps the memory in its turn"}

servers: list[subprocess.Popen] = []


def stop_all() -> None:
    for process in servers:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def on_signal(signum: int, _frame: object) -> None:
    stop_all()
    sys.exit(128 + signum)


class Server:
    """`agentrl serve-env <env> --port 0` in its own process group; its URL read from its start line."""

    def __init__(self, env: str) -> None:
        self.log: list[str] = []
        self.process = subprocess.Popen(
            [*AGENTRL, "serve-env", env, "--host", "127.0.0.1", "--port", "0"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        servers.append(self.process)
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.log.append(line)
                match = re.search(r" on (http://127\.0\.0\.1:\d+)", line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(timeout=60) or not self.url:
            self.stop()
            raise RuntimeError(f"serve-env {env} did not start within 60 s:\n{''.join(self.log)}")

    def stop(self) -> None:
        stop(self.process)


class Experts:
    """expert.ts: agentrl's scripted experts over a pipe."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", str(HERE / "expert.ts")],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        servers.append(self.process)

    def ask(self, request: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("expert.ts exited")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"expert.ts: {reply['error']}")
        return reply

    def act(self, key: str, env: str, seed: int, observation: dict) -> dict:
        return self.ask({"act": key, "env": env, "seed": seed, "observation": {"text": observation["text"], "data": observation.get("data")}})

    def tools(self, env: str) -> list[str]:
        return self.ask({"tools": env})["tools"]


def env_names() -> list[str]:
    listing = subprocess.run([*AGENTRL, "envs"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in listing.splitlines() if line.strip() and not line.startswith(" ")]


def validate_in_process(url: str) -> dict:
    """`openenv validate <url>` through the CLI's typer app (what the `openenv` script runs)."""
    from openenv.cli.__main__ import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["validate", url])
    return check_report(result.exit_code, result.stdout, url)


def check_report(exit_code: int, output: str, url: str) -> dict:
    try:
        report = json.loads(output)
    except ValueError as error:
        raise AssertionError(f"openenv validate {url}: exit {exit_code}, not JSON: {output[:500]}") from error
    failed = [criterion for criterion in report["criteria"] if not criterion["passed"]]
    assert exit_code == 0 and report["passed"] and not failed, f"openenv validate {url}: exit {exit_code}, failed: {json.dumps(failed, indent=1)}"
    assert report["summary"]["passed_count"] == report["summary"]["total_count"] == 6, report["summary"]
    assert report["mode"] == "simulation" and report["standard_profile"] == "openenv-http/1.x", report
    return report


def text_of(value: object) -> str:
    """A tool's output as the env writes it into the observation (JSON.stringify for non-strings)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def play_episodes(url: str, env: str, experts: Experts) -> list[str]:
    from openenv import GenericEnvClient

    lines = []
    for seed in SEEDS:
        async with GenericEnvClient(base_url=url) as client:
            result = await client.reset(seed=seed)
            assert result.reward is None and result.done is False, result
            key = f"{env}/{seed}"
            steps = 0
            total = 0.0
            while not result.done:
                action = experts.act(key, env, seed, result.observation)
                result = await client.step({"text": action["text"]})
                steps += 1
                total += result.reward or 0.0
                assert steps <= MAX_STEPS, f"{env} seed {seed}: not done after {MAX_STEPS} steps"
            metadata = result.observation.get("metadata", {})
            assert metadata.get("success") is True, f"{env} seed {seed}: the expert's episode ended without success: {metadata}"
            state = await client.state()
            assert state["step_count"] == steps and state["done"] is True and state["seed"] == seed, state
            lines.append(f"seed {seed}: {steps} steps, return {total:g}")
    return lines


async def use_tools(url: str, env: str, experts: Experts) -> str:
    from openenv.core.mcp_client import MCPToolClient

    expected = experts.tools(env)
    call = None
    if expected:
        # The expert's first action of seed 0, as a tool call.
        first = experts.act(f"{env}/mcp", env, 0, await first_observation(url))
        call = first["tool_call"]
        assert call is not None, f"{env}: the expert's first action is not a tool call: {first['text'][:200]}"

    async with MCPToolClient(base_url=url) as step_mode:
        await step_mode.reset(seed=0)
        listed = [tool.name for tool in await step_mode.list_tools()]
        assert listed == expected, f"{env}: step mode lists {listed}, the env has {expected}"
        shown = await step_mode.call_tool(call["name"], **call["arguments"]) if call else None

    http_mode = MCPToolClient(base_url=url)
    http_mode.use_production_mode = True
    try:
        listed = [tool.name for tool in await http_mode.list_tools()]
        assert listed == expected, f"{env}: HTTP mode lists {listed}, the env has {expected}"
        assert http_mode._production_session_id is not None, "no openenv/session/create session"
        raw = await http_mode.call_tool(call["name"], **call["arguments"]) if call else None
    finally:
        await http_mode.close()
    if call is None:
        return "no tools (list_tools: [] in both modes)"
    assert isinstance(shown, str) and raw is not None, f"{env}: step mode gave {shown!r}, HTTP mode {raw!r}"
    if env in TOOLS_ACT_IN_THE_TURN:
        return f"{len(expected)} tools; {call['name']} → {text_of(raw)[:40]!r} (HTTP mode), {shown[:60]!r} (step mode; not compared: {TOOLS_ACT_IN_THE_TURN[env]})"
    assert text_of(raw)[:100] in shown, f"{env}: HTTP mode's {text_of(raw)[:100]!r} not in what step mode showed: {shown[:300]!r}"
    return f"{len(expected)} tools; {call['name']} → {text_of(raw)[:40]!r} (HTTP mode) within {shown[:60]!r} (step mode)"


async def first_observation(url: str) -> dict:
    from openenv import GenericEnvClient

    async with GenericEnvClient(base_url=url) as client:
        return (await client.reset(seed=0)).observation


async def check_env(env: str, experts: Experts, cli_once: list[bool]) -> None:
    started = time.monotonic()
    server = Server(env)
    console_script = None
    try:
        if not cli_once[0]:
            cli_once[0] = True
            console_script = subprocess.Popen([str(Path(sys.executable).parent / "openenv"), "validate", server.url], stdout=subprocess.PIPE, text=True)
        report = validate_in_process(server.url)
        episodes = await play_episodes(server.url, env, experts)
        tools = await use_tools(server.url, env, experts)
        if console_script is not None:
            output, _ = console_script.communicate(timeout=120)
            check_report(console_script.returncode, output, server.url)
            print(f"  `openenv validate {server.url}` (console script): passed")
        print(f"ok {env} ({time.monotonic() - started:.1f} s): validate {report['summary']['passed_count']}/6; {'; '.join(episodes)}; MCP: {tools}", flush=True)
    except BaseException:
        print(f"FAILED {env}; server log:\n{''.join(server.log)[-3000:]}", flush=True)
        raise
    finally:
        if console_script is not None and console_script.poll() is None:
            console_script.kill()
        server.stop()


async def main(selected: list[str]) -> int:
    names = env_names()
    unknown = sorted(set(selected) - set(names))
    if unknown:
        print(f"unknown env(s) {unknown}; envs: {', '.join(names)}", file=sys.stderr)
        return 2
    envs = selected or names
    started = time.monotonic()
    experts = Experts()
    import openenv.core  # noqa: F401  (the imports cost seconds; done once, before the timings)

    print(f"== openenv-core imported in {time.monotonic() - started:.1f} s; checking {len(envs)} envs: {', '.join(envs)}", flush=True)
    failures = []
    cli_once = [False]
    for env in envs:
        try:
            await asyncio.wait_for(check_env(env, experts, cli_once), timeout=ENV_TIMEOUT_S)
        except Exception as error:  # noqa: BLE001 (every env is checked; the failures are listed)
            failures.append(env)
            print(f"FAILED {env}: {type(error).__name__}: {error}", flush=True)
    print(f"== {len(envs) - len(failures)}/{len(envs)} envs passed in {time.monotonic() - started:.1f} s" + (f"; failed: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.exit(asyncio.run(main(sys.argv[1:])))
