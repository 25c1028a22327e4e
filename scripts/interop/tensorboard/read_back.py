"""check:trackers, TensorBoard's side: reads agentrl's event files with tensorboard's EventAccumulator.

  python read_back.py <expected.json> [<agentrl train run folder>]
"""
import json
import struct
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

expected = json.load(open(sys.argv[1]))
train_folder = sys.argv[2] if len(sys.argv) > 2 else None
failures = []

accumulator = EventAccumulator(expected["tensorboardFolder"], size_guidance={"scalars": 0})
accumulator.Reload()
tags = set(accumulator.Tags()["scalars"])
if tags != set(expected["metrics"]):
    failures.append(f"tags {sorted(tags)} != {sorted(expected['metrics'])}")
float32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
for key, points in expected["metrics"].items():
    if key not in tags:
        continue
    got = [(e.step, e.value, round(e.wall_time * 1000)) for e in accumulator.Scalars(key)]
    want = [(step, float32(value), timestamp) for step, value, timestamp in points]
    if got != want:
        failures.append(f"scalar {key}: got {got[:3]}… ({len(got)}), want {want[:3]}… ({len(want)})")
print(f"TensorBoard: {len(tags)} scalar tags x {len(expected['metrics']['reward'])} steps read back as written")

if train_folder is not None:
    trained = EventAccumulator(train_folder)
    trained.Reload()
    keys = set(trained.Tags()["scalars"])
    for key in ["reward", "success", "klToReference", "responseLength", "rewardStdWithinGroup"]:
        if key not in keys:
            failures.append(f"agentrl train event file: no scalar {key} (has {sorted(keys)})")
    steps = [e.step for e in trained.Scalars("reward")] if "reward" in keys else []
    if steps != [1, 2]:
        failures.append(f"agentrl train event file: reward steps {steps}")
    print(f"TensorBoard: agentrl train wrote {len(keys)} scalar tags over steps {steps}")

for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
