"""check:trackers, MLflow's side: reads the runs agentrl logged back with MLflow's own client.

  python read_back.py <tracking uri> <expected.json> [<agentrl train run name>]
"""
import json
import math
import sys

from mlflow.tracking import MlflowClient

uri, expected_path = sys.argv[1], sys.argv[2]
train_run = sys.argv[3] if len(sys.argv) > 3 else None
expected = json.load(open(expected_path))
client = MlflowClient(tracking_uri=uri)
failures = []

experiment = client.get_experiment_by_name(expected["experiment"])
runs = client.search_runs([experiment.experiment_id], filter_string=f"tags.`agentrl.run` = '{expected['run']}'")
if len(runs) != 1:
    failures.append(f"expected one MLflow run for {expected['run']} (a resume continues it), found {len(runs)}")
run = runs[0]
if expected["runIds"][0] != expected["runIds"][1] or run.info.run_id != expected["runIds"][0]:
    failures.append(f"the resumed run did not continue the first: {expected['runIds']} vs {run.info.run_id}")
if run.info.status != "FINISHED":
    failures.append(f"status {run.info.status}, expected FINISHED")
if run.info.run_name != expected["run"]:
    failures.append(f"run name {run.info.run_name}")
if run.data.params != expected["params"]:
    failures.append(f"params {run.data.params} != {expected['params']}")
for key, points in expected["metrics"].items():
    history = sorted(client.get_metric_history(run.info.run_id, key), key=lambda m: m.step)
    got = [(m.step, m.value, m.timestamp) for m in history]
    want = [(step, value, timestamp) for step, value, timestamp in points]
    if len(got) != len(want) or any(g[0] != w[0] or not math.isclose(g[1], w[1], rel_tol=0, abs_tol=0) or g[2] != w[2] for g, w in zip(got, want)):
        failures.append(f"metric {key}: got {got[:3]}… ({len(got)}), want {want[:3]}… ({len(want)})")
print(f"MLflow: run {run.info.run_id} has {len(expected['metrics'])} metrics x {len(expected['metrics']['reward'])} steps, params and status as logged")

if train_run is not None:
    runs = client.search_runs([client.get_experiment_by_name("agentrl").experiment_id], filter_string=f"tags.`agentrl.run` = '{train_run}'")
    if len(runs) != 1:
        failures.append(f"agentrl train run {train_run}: {len(runs)} MLflow runs")
    else:
        trained = runs[0]
        keys = set(trained.data.metrics)
        for key in ["reward", "success", "klToReference", "entropy", "gradNorm", "clipfrac", "learningRate", "responseLength", "rewardStdWithinGroup", "sampledTokens"]:
            if key not in keys:
                failures.append(f"agentrl train run {train_run}: no metric {key} (has {sorted(keys)})")
        steps = [m.step for m in client.get_metric_history(trained.info.run_id, "reward")]
        if sorted(steps) != [1, 2]:
            failures.append(f"agentrl train run {train_run}: reward steps {steps}")
        if trained.data.params.get("algo") != "grpo" or trained.info.status != "FINISHED":
            failures.append(f"agentrl train run {train_run}: params {trained.data.params.get('algo')}, status {trained.info.status}")
        print(f"MLflow: agentrl train run {train_run} logged {len(keys)} metrics over steps {sorted(steps)}")

for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
