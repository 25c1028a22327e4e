"""Cost of a training run in requests and tokens, counted from the strict server's request log (one JSON line per
request): per endpoint, the number of requests, bytes each way, and the tokens the server had to process
(sampling: prompt tokens x the prefills they cost and max new tokens x num_samples; forward_backward: the
datums' input tokens, split into forward-only and training calls), divided by the run's iterations.
Heartbeats and telemetry are counted apart (they cost no GPU time). Prints a Markdown table (docs/tinker.md's).

    python request_cost.py --log requests.jsonl --from 120 --to 480 --iterations 2
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict


def summarise(entries: list[dict], iterations: int) -> str:
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for entry in entries:
        name = entry["path"].removeprefix("/api/v1/")
        if name.startswith("training_runs/"):
            name = f"{entry['method']} training_runs/…/checkpoints/…" + ("/ttl" if name.endswith("/ttl") else "")
        if name == "forward_backward" and entry.get("forward_only"):
            name = "forward_backward (forward_only)"
        if name == "retrieve_future" and entry.get("status") == 408:
            name = "retrieve_future (408 try_again)"
        row = rows[name]
        row["requests"] += 1
        row["request_bytes"] += entry.get("request_bytes", 0)
        row["response_bytes"] += entry.get("response_bytes", 0)
        row["refused"] += 1 if entry.get("refused") or entry.get("error") else 0
        row["upstream_gap"] += 1 if entry.get("upstream_gap") else 0
        if name == "asample":
            row["prompt_tokens"] += entry.get("prompt_tokens", 0)
            row["samples"] += entry.get("num_samples", 1)
            row["new_tokens_max"] += (entry.get("max_tokens") or 0) * entry.get("num_samples", 1)
        if name.startswith("forward_backward"):
            row["datums"] += entry.get("datums", 0)
            row["tokens"] += entry.get("tokens", 0)
    per = max(1, iterations)
    lines = [
        f"| endpoint | requests / iteration | KB sent / iteration | KB received / iteration | tokens / iteration | refused |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for name in sorted(rows, key=lambda key: -rows[key]["requests"]):
        row = rows[name]
        if name == "asample":
            tokens = f"{row['prompt_tokens'] / per:.0f} prompt tokens prefilled for {row['samples'] / per:.0f} samples (≤ {row['new_tokens_max'] / per:.0f} new)"
        elif name.startswith("forward_backward"):
            tokens = f"{row['tokens'] / per:.0f} tokens in {row['datums'] / per:.0f} datums"
        else:
            tokens = ""
        lines.append(f"| {name} | {row['requests'] / per:.1f} | {row['request_bytes'] / per / 1024:.1f} | {row['response_bytes'] / per / 1024:.1f} | {tokens} | {row['refused']:.0f} |")
    total = sum(row["requests"] for name, row in rows.items() if name not in ("session_heartbeat", "telemetry"))
    refused = sum(row["refused"] for row in rows.values())
    gaps = sum(row["upstream_gap"] for row in rows.values())
    lines.append(f"\n{total / per:.1f} requests per iteration besides heartbeats and telemetry; {refused:.0f} refused by the strict server; {gaps:.0f} SkyRL cannot serve (checkpoint delete/ttl: 404)")
    return "\n".join(lines)


def per_step(entries: list[dict]) -> str:
    """One line per optimizer step: the requests since the previous optim_step (SFT warm-start steps included)."""
    lines, segment = [], []
    for entry in entries:
        if entry["path"].endswith(("session_heartbeat", "telemetry")):
            continue
        segment.append(entry)
        if entry["path"].endswith("/optim_step") and not entry.get("replayed"):
            counts: dict[str, int] = defaultdict(int)
            for item in segment:
                name = item["path"].removeprefix("/api/v1/")
                counts[name + (" (forward_only)" if item.get("forward_only") else "")] += 1
            prompt = sum(item.get("prompt_tokens", 0) for item in segment if item["path"].endswith("asample"))
            samples = sum(item.get("num_samples", 1) for item in segment if item["path"].endswith("asample"))
            trained = sum(item.get("tokens", 0) for item in segment if item["path"].endswith("forward_backward") and not item.get("forward_only"))
            scored = sum(item.get("tokens", 0) for item in segment if item.get("forward_only"))
            calls = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
            lines.append(f"step {len(lines) + 1}: {len(segment)} requests ({calls}); sampled {samples} from {prompt} prompt tokens; "
                         f"forward_only {scored} tokens; forward_backward {trained} tokens")
            segment = []
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--from", dest="start", type=int, default=0, help="first log line of the run (0-based)")
    parser.add_argument("--to", dest="end", type=int, default=None, help="line after the run's last")
    parser.add_argument("--iterations", type=int, default=1)
    options = parser.parse_args()
    with open(options.log) as file:
        entries = [json.loads(line) for line in file.readlines()[options.start : options.end]]
    print(f"{len(entries)} requests over {options.iterations} iteration(s) (log lines {options.start}–{options.end})")
    print(summarise(entries, options.iterations))
    print("\nper optimizer step (requests since the previous optim_step; heartbeats and telemetry left out):")
    print(per_step(entries))
    refused = [entry for entry in entries if entry.get("refused") or entry.get("error")]
    for entry in refused[:5]:
        print(f"refused: {entry['method']} {entry['path']} rule {entry.get('refused') or 'error'} {entry.get('error', '')}")
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
