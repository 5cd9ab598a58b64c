#!/usr/bin/python3
"""Plots Crema (or Caffe) training runs against the iteration, into one PNG:
the training loss ('loss', else the first output named like a loss, such as
SSD's mbox_loss), the test loss, and the test score on a [0, 1] axis
('accuracy', else the first output that is not a loss, such as SSD's
detection_eval, its mAP), and below them the learning rate the log shows
(`Iteration N, lr = X` lines, one per display), so a schedule's warm-up
and restarts can be seen against the loss. The loss axis turns
logarithmic when its largest value dwarfs the rest (an untrained net's
first test).

    plot_training_log.py RUN [RUN ...] OUTPUT.png

A RUN is a log, or a metrics file (crema train's .metrics.jsonl, read in
place of a log that has one beside it as <log>.metrics.jsonl). Several runs
share the axes, one colour each, named by their file names: a recipe
against another.

Needs matplotlib (Debian: python3-matplotlib, installed by
scripts/install_deps.sh; run with /usr/bin/python3).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse_log  # noqa: E402


COLUMNS = ('NumIters', 'Seconds', 'LearningRate')


def outputs(rows):
    """The output names the rows hold, in first-seen order."""
    names = []
    for row in rows:
        names += [key for key in row if key not in COLUMNS and key not in names]
    return names


def loss_key(rows):
    """The output to plot as the loss: 'loss', else the first whose name has
    'loss' in it (mbox_loss), else None."""
    names = outputs(rows)
    if 'loss' in names:
        return 'loss'
    return next((name for name in names if 'loss' in name), None)


def score_key(rows):
    """The output to plot on the [0, 1] axis: 'accuracy', else the first
    other output that is not a loss (detection_eval: mAP), else None."""
    names = outputs(rows)
    if 'accuracy' in names:
        return 'accuracy'
    return next((name for name in names if 'loss' not in name), None)


COLOURS = ['tab:blue', 'tab:red', 'tab:green', 'tab:purple', 'tab:brown', 'tab:olive']


def run_name(path):
    name = os.path.basename(path)
    for suffix in ('.metrics.jsonl', '.jsonl', '.log'):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def plot_run(path, colour, several, loss_axes, score_axes, lr_axes):
    """Draws one run; returns its test score's name and final value (or None)."""
    train, test = parse_log.parse_any(path)
    prefix = run_name(path) + ': ' if several else ''
    rates = [(r['NumIters'], r['LearningRate']) for r in train
             if r['LearningRate'] == r['LearningRate']]  # not NaN: the run gave one
    if lr_axes is not None and rates:
        lr_axes.plot([i for i, _ in rates], [lr for _, lr in rates], color=colour, linewidth=1)
    train_loss = loss_key(train)
    if train_loss:
        loss_axes.plot([r['NumIters'] for r in train], [r.get(train_loss) for r in train],
                       color=colour, linewidth=1, alpha=0.6 if several else 1,
                       label='%strain %s' % (prefix, train_loss))
    test_loss = loss_key(test)
    if test_loss:
        rows = [r for r in test if test_loss in r]
        loss_axes.plot([r['NumIters'] for r in rows], [r[test_loss] for r in rows],
                       color=colour if several else 'tab:orange', marker='.', linestyle='--',
                       label='%stest %s' % (prefix, test_loss))
    score = score_key(test)
    if not score:
        return None
    rows = [r for r in test if score in r]
    name = score + (' (mAP)' if score == 'detection_eval' else '')
    score_axes.plot([r['NumIters'] for r in rows], [r[score] for r in rows],
                    color=colour if several else 'tab:green', marker='o', markersize=3,
                    label='%stest %s' % (prefix, name))
    score_axes.set_ylabel(name)
    return name, rows[-1][score]


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 1
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write('plot_training_log.py: matplotlib is missing '
                         '(apt-get install python3-matplotlib; run with /usr/bin/python3)\n')
        return 1
    runs, output = argv[1:-1], argv[-1]
    for path in runs:
        if not os.path.isfile(path):
            sys.stderr.write('plot_training_log.py: %s: no such file\n' % path)
            return 1
    has_rates = any(r['LearningRate'] == r['LearningRate']
                    for path in runs for r in parse_log.parse_any(path)[0])
    if has_rates:
        figure, (loss_axes, lr_axes) = plt.subplots(
            2, 1, sharex=True, figsize=(9, 6.5), gridspec_kw={'height_ratios': [3, 1]})
        lr_axes.set_ylabel('learning rate')
        lr_axes.set_xlabel('iteration')
        lr_axes.grid(alpha=0.3)
    else:
        figure, loss_axes = plt.subplots(figsize=(9, 4.5))
        lr_axes = None
        loss_axes.set_xlabel('iteration')
    score_axes = loss_axes.twinx()
    score_axes.set_ylim(0, 1)
    several = len(runs) > 1
    finals = []
    for index, path in enumerate(runs):
        final = plot_run(path, COLOURS[index % len(COLOURS)], several, loss_axes, score_axes,
                         lr_axes)
        if final:
            finals.append('%s%s %.4f' % (run_name(path) + ' ' if several else '', *final))
    loss_axes.set_ylabel('loss')
    losses = sorted(y for line in loss_axes.get_lines() for y in line.get_ydata()
                    if y is not None and y == y)
    if losses and losses[0] > 0 and losses[-1] > 10 * losses[len(losses) // 2]:
        loss_axes.set_yscale('log')  # an untrained net's first test would flatten the rest
    lines, labels = loss_axes.get_legend_handles_labels()
    more_lines, more_labels = score_axes.get_legend_handles_labels()
    loss_axes.legend(lines + more_lines, labels + more_labels, loc='center right',
                     fontsize='small')
    if finals:
        title = 'final test ' + ', '.join(finals)
        loss_axes.set_title(title if several else '%s: %s' % (os.path.basename(runs[0]), title))
    loss_axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    print('wrote %s' % output)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
