#!/usr/bin/env python3
"""Parses a Crema (or Caffe) training log into two CSV files.

    parse_log.py LOGFILE [OUTPUT_DIR]

writes OUTPUT_DIR/<log name>.train with columns NumIters,Seconds,LearningRate
and one column per train net output (e.g. loss), and OUTPUT_DIR/<log name>.test
with NumIters,Seconds,LearningRate and one column per test net output (e.g.
accuracy,loss). Seconds count from the first line of the log.
"""
import csv
import datetime
import os
import re
import sys

# glog line prefix: I20261121 23:25:13.202491 (newer glog) or I1121 23:25:13.202491
TIME = re.compile(r'^[IWEF](\d{4})?(\d{4}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})')
ITERATION = re.compile(r'Iteration (\d+)')
LEARNING_RATE = re.compile(r'Iteration \d+, lr = ([-+.\deE]+)')
TRAIN_OUTPUT = re.compile(r'Train net output #\d+: (\S+) = ([-+.\deEnaif]+)')
TEST_OUTPUT = re.compile(r'Test net output #\d+: (\S+) = ([-+.\deEnaif]+)')
TESTING = re.compile(r'Iteration (\d+), Testing net')


def line_seconds(line, start):
    match = TIME.match(line)
    if not match:
        return None
    year, month_day, hour, minute, second, micro = match.groups()
    stamp = datetime.datetime(int(year or 2000), int(month_day[:2]), int(month_day[2:]),
                              int(hour), int(minute), int(second), int(micro))
    return stamp, (stamp - start).total_seconds() if start else 0.0


def parse(path):
    """Returns (train_rows, test_rows): lists of dicts in log order."""
    train, test = [], []
    start = None
    iteration, learning_rate, seconds = -1, float('nan'), 0.0
    testing = None  # the test row being filled
    with open(path) as log:
        for line in log:
            timed = line_seconds(line, start)
            if timed:
                if start is None:
                    start = timed[0]
                seconds = (timed[0] - start).total_seconds()
                # A log crossing midnight into a new year is not expected.
                if seconds < 0:
                    seconds += 365 * 24 * 3600
            match = TESTING.search(line)
            if match:
                testing = {'NumIters': int(match.group(1)), 'Seconds': seconds,
                           'LearningRate': learning_rate}
                test.append(testing)
                continue
            match = TEST_OUTPUT.search(line)
            if match and testing is not None:
                testing[match.group(1)] = float(match.group(2))
                continue
            match = LEARNING_RATE.search(line)
            if match:
                learning_rate = float(match.group(1))
                if train and train[-1]['NumIters'] == iteration:
                    train[-1]['LearningRate'] = learning_rate
                continue
            match = TRAIN_OUTPUT.search(line)
            if match:
                if not train or train[-1]['NumIters'] != iteration:
                    train.append({'NumIters': iteration, 'Seconds': seconds,
                                  'LearningRate': learning_rate})
                train[-1][match.group(1)] = float(match.group(2))
                continue
            match = ITERATION.search(line)
            if match and 'loss =' in line:
                iteration = int(match.group(1))
                testing = None
    return train, test


def parse_metrics(path):
    """The same rows from a metrics file (crema train's .metrics.jsonl, one
    JSON object per line): Seconds from the first line's time, the outputs
    by name (an output of several values is left out), and the training
    lines' images_per_s as ImagesPerSecond."""
    import json
    train, test = [], []
    start = None
    with open(path) as metrics:
        for line in metrics:
            if not line.endswith('\n'):
                break  # a line still being written
            record = json.loads(line)
            start = record['time'] if start is None else start
            row = {'NumIters': record['iter'], 'Seconds': record['time'] - start,
                   'LearningRate': record.get('lr', float('nan'))}
            if record['kind'] == 'train':
                row['ImagesPerSecond'] = record['images_per_s']
            for name, value in record['outputs'].items():
                if not isinstance(value, list):
                    row[name] = float('nan') if value is None else value
            (train if record['kind'] == 'train' else test).append(row)
    for row in test:  # the rate in force at the test: the last display's
        earlier = [r['LearningRate'] for r in train if r['NumIters'] <= row['NumIters']]
        row['LearningRate'] = earlier[-1] if earlier else float('nan')
    return train, test


def parse_any(path):
    """parse_metrics for a .jsonl file or a log with <log>.metrics.jsonl
    beside it; parse for a log alone."""
    if path.endswith('.jsonl'):
        return parse_metrics(path)
    if os.path.isfile(path + '.metrics.jsonl'):
        return parse_metrics(path + '.metrics.jsonl')
    return parse(path)


def write_csv(rows, path):
    fields = ['NumIters', 'Seconds', 'LearningRate']
    for row in rows:
        fields += [key for key in row if key not in fields]
    with open(path, 'w', newline='') as out:
        writer = csv.DictWriter(out, fieldnames=fields, restval='')
        writer.writeheader()
        writer.writerows(rows)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 1
    log_path = argv[1]
    if not os.path.isfile(log_path):
        sys.stderr.write('parse_log.py: %s: no such file\n' % log_path)
        return 1
    out_dir = argv[2] if len(argv) == 3 else os.path.dirname(os.path.abspath(log_path))
    train, test = parse(log_path)
    base = os.path.join(out_dir, os.path.basename(log_path))
    write_csv(train, base + '.train')
    write_csv(test, base + '.test')
    print('%s: %d train rows, %d test rows -> %s.train, %s.test'
          % (log_path, len(train), len(test), base, base))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
